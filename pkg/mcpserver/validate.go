package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/steps"
)

type validateArgs struct {
	Path    string   `json:"path"`
	Content string   `json:"content"`
	Format  string   `json:"format"`
	Vars    []string `json:"vars"`
}

type validationError struct {
	File    string `json:"file"`
	Line    int    `json:"line"`
	Column  int    `json:"column"`
	Message string `json:"message"`
}

type validateResult struct {
	Valid   bool              `json:"valid"`
	Name    string            `json:"name,omitempty"`
	Steps   int               `json:"steps"`
	Devices []string          `json:"devices"`
	Probes  []string          `json:"probes"`
	Errors  []validationError `json:"errors"`
}

func (s *Server) validateSequence(ctx context.Context, req mcp.CallToolRequest, a *validateArgs) (any, string, error) {
	var seq *steps.Sequence
	var err error
	opts := steps.LoadOptions{Vars: a.Vars}
	switch {
	case a.Path != "" && a.Content != "":
		return nil, "", errors.New("give path or content, not both")
	case a.Path != "":
		real, rerr := s.cfg.Policy.ResolveFile(a.Path)
		if rerr != nil {
			return nil, "", rerr
		}
		seq, err = steps.Load(s.cfg.Gates.Files, real, opts)
		var pe *os.PathError
		if errors.As(err, &pe) {
			return nil, "", err
		}
	case a.Content != "":
		name := "<content>.yaml"
		switch strings.ToLower(a.Format) {
		case "json":
			name = "<content>.json"
		case "", "yaml", "yml":
		default:
			return nil, "", fmt.Errorf("format %q: want yaml or json", a.Format)
		}
		seq, err = steps.Parse(name, []byte(a.Content), opts)
	default:
		return nil, "", errors.New("give path (a sequence file under a --root) or content (YAML or JSON text)")
	}
	out := validateResult{Devices: []string{}, Probes: []string{}, Errors: []validationError{}}
	if err != nil {
		var el steps.ErrorList
		if !errors.As(err, &el) {
			return nil, "", err
		}
		var lines []string
		for _, e := range el {
			out.Errors = append(out.Errors, validationError{File: e.Pos.File, Line: e.Pos.Line, Column: e.Pos.Col, Message: e.Msg})
			lines = append(lines, e.Error())
		}
		return out, fmt.Sprintf("invalid: %d problems\n%s", len(el), strings.Join(lines, "\n")), nil
	}
	out.Valid = true
	out.Name = seq.Name
	out.Steps = steps.Written(seq)
	for _, d := range seq.Devices {
		out.Devices = append(out.Devices, d.Name)
	}
	for _, p := range seq.Probes {
		out.Probes = append(out.Probes, p.Name)
	}
	return out, fmt.Sprintf("valid: %s, %s", seq.Name, steps.CountedPlan(seq)), nil
}

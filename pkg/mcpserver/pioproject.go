package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/pio"
	"github.com/hilrun/hilrun/pkg/steps"
)

type initProjectArgs struct {
	Board      string `json:"board"`
	Framework  string `json:"framework"`
	ProjectDir string `json:"project_dir"`
	Background bool   `json:"background"`
}

func (s *Server) pioInitProject(ctx context.Context, req mcp.CallToolRequest, a *initProjectArgs) (any, string, error) {
	if a.ProjectDir == "" {
		return nil, "", errors.New("project_dir is required: the new project's folder under a --root")
	}
	p := &s.cfg.Policy
	if len(p.Roots) == 0 {
		return nil, "", refused("project_dir %s: no --root folder was given", a.ProjectDir)
	}
	dir := a.ProjectDir
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(p.Roots[0], dir)
	}
	dir = filepath.Clean(dir)
	// The folder may not exist yet: its parent must, under a root.
	parent, err := p.ResolveDir("project_dir", filepath.Dir(dir), p.Roots[0])
	if err != nil {
		return nil, "", err
	}
	dir = filepath.Join(parent, filepath.Base(dir))
	if err := p.CheckOutput("project_dir", dir); err != nil {
		return nil, "", err
	}
	// An unknown board is refused before a task exists: a background
	// call learns at once.
	if _, err := s.pioClient(nil, nil).BoardInfo(ctx, a.Board); err != nil {
		return nil, "", err
	}
	return s.runPIOTask(ctx, req, "init_project", a.Background, func(ctx context.Context, c *pio.Client) (*pioResult, error) {
		out, err := c.InitProject(ctx, pio.InitSpec{ProjectDir: dir, Board: a.Board, Framework: a.Framework})
		if out == nil {
			return nil, err
		}
		return outputResult(out), nil
	})
}

type projectArgs struct {
	ProjectDir  string `json:"project_dir"`
	Env         string `json:"env"`
	Environment string `json:"environment"`
	Port        string `json:"port"`
	Background  bool   `json:"background"`
}

func (a *projectArgs) env() string { return first(a.Env, a.Environment) }

// configOption is one option of platformio.ini: its value as PlatformIO
// read it, as text, and a list option's values.
type configOption struct {
	Name  string `json:"name"`
	Value string `json:"value"`
	// Values holds the items of a list option (lib_deps, build_flags).
	Values []string `json:"values,omitempty"`
}

type configSection struct {
	Name    string         `json:"name"`
	Options []configOption `json:"options"`
}

type configResult struct {
	ProjectDir string          `json:"project_dir"`
	Envs       []string        `json:"envs"`
	Sections   []configSection `json:"sections"`
}

func (s *Server) pioProjectConfig(ctx context.Context, _ mcp.CallToolRequest, a *projectArgs) (any, string, error) {
	dir, err := s.pioDir(a.ProjectDir)
	if err != nil {
		return nil, "", err
	}
	cfg, err := s.pioClient(nil, nil).GetProjectConfig(ctx, dir)
	if err != nil {
		return nil, "", err
	}
	out := configResult{ProjectDir: dir, Envs: append([]string{}, cfg.Envs()...), Sections: []configSection{}}
	var lines []string
	for _, sec := range cfg.Sections {
		cs := configSection{Name: sec.Name, Options: []configOption{}}
		lines = append(lines, "["+sec.Name+"]")
		for _, o := range sec.Options {
			co := configOption{Name: o.Name}
			switch v := o.Value.(type) {
			case string:
				co.Value = v
			case []any:
				for _, x := range v {
					co.Values = append(co.Values, fmt.Sprint(x))
				}
				co.Value = strings.Join(co.Values, ", ")
			default:
				b, _ := json.Marshal(v)
				co.Value = string(b)
			}
			cs.Options = append(cs.Options, co)
			lines = append(lines, o.Name+" = "+co.Value)
		}
		out.Sections = append(out.Sections, cs)
	}
	return out, strings.Join(lines, "\n"), nil
}

func (s *Server) pioClean(ctx context.Context, req mcp.CallToolRequest, a *projectArgs) (any, string, error) {
	dir, err := s.pioDir(a.ProjectDir)
	if err != nil {
		return nil, "", err
	}
	if err := pio.CheckProject(dir, a.env()); err != nil {
		return nil, "", err
	}
	return s.runPIOTask(ctx, req, "clean_project", a.Background, func(ctx context.Context, c *pio.Client) (*pioResult, error) {
		out, err := c.RunTarget(ctx, dir, a.env(), "clean", "")
		if err != nil {
			return nil, err
		}
		return outputResult(out), nil
	})
}

func (s *Server) pioUploadFS(ctx context.Context, req mcp.CallToolRequest, a *projectArgs) (any, string, error) {
	dir, err := s.pioDir(a.ProjectDir)
	if err != nil {
		return nil, "", err
	}
	if err := pio.CheckProject(dir, a.env()); err != nil {
		return nil, "", err
	}
	port := a.Port
	var keys []string
	if port != "" {
		s.mu.Lock()
		c := s.findConnLocked(port)
		s.mu.Unlock()
		if c != nil {
			return nil, "", fmt.Errorf("port %s is open as connection %s: close it (stop_monitor or serial_close) before upload_filesystem, or use upload with port, which lends the port for the upload", port, c.id)
		}
		if !steps.IsPortPath(port) {
			return nil, "", fmt.Errorf("port %q: not a port path", port)
		}
		if err := s.checkPort(port); err != nil {
			return nil, "", err
		}
		if err := s.leaseBusy(ctx, portKey(realPort(port))); err != nil {
			return nil, "", err
		}
		keys = append(keys, portKey(realPort(port)))
	}
	return s.runPIOTask(ctx, req, "upload_filesystem", a.Background, func(ctx context.Context, c *pio.Client) (*pioResult, error) {
		if len(keys) > 0 {
			release, err := s.locks.acquire(ctx, keys, who(ctx, req), 0)
			if err != nil {
				return nil, err
			}
			defer release()
		}
		out, err := c.RunTarget(ctx, dir, a.env(), "uploadfs", port)
		if err != nil {
			return nil, err
		}
		return outputResult(out), nil
	})
}

func (s *Server) pioCheck(ctx context.Context, req mcp.CallToolRequest, a *projectArgs) (any, string, error) {
	dir, err := s.pioDir(a.ProjectDir)
	if err != nil {
		return nil, "", err
	}
	if err := pio.CheckProject(dir, a.env()); err != nil {
		return nil, "", err
	}
	return s.runPIOTask(ctx, req, "check_project", a.Background, func(ctx context.Context, c *pio.Client) (*pioResult, error) {
		runs, out, err := c.CheckProjectDefects(ctx, dir, a.env())
		if err != nil {
			return nil, err
		}
		r := outputResult(out)
		r.Check = runs
		n := 0
		for _, run := range runs {
			n += len(run.Defects)
			r.OK = r.OK && run.Succeeded
		}
		r.Summary = fmt.Sprintf("%d defects", n)
		return r, nil
	})
}

type runTestsArgs struct {
	projectArgs
	Filter           []string `json:"filter"`
	Ignore           []string `json:"ignore"`
	TestPort         string   `json:"test_port"`
	WithoutUploading bool     `json:"without_uploading"`
	LockTimeoutMS    *int64   `json:"lock_timeout_ms"`
}

// pioRunTests runs the tests as a one-step sequence with a pio_test step:
// a run of hilrun's, its report (report_resource) holding every test case,
// as `hilrun run` does with the step.
func (s *Server) pioRunTests(ctx context.Context, req mcp.CallToolRequest, a *runTestsArgs) (any, string, error) {
	dir, err := s.pioDir(a.ProjectDir)
	if err != nil {
		return nil, "", err
	}
	if err := pio.CheckProject(dir, a.env()); err != nil {
		return nil, "", err
	}
	spec := map[string]any{"project_dir": dir}
	if e := a.env(); e != "" {
		spec["env"] = e
	}
	if len(a.Filter) > 0 {
		spec["filter"] = a.Filter
	}
	if len(a.Ignore) > 0 {
		spec["ignore"] = a.Ignore
	}
	if a.Port != "" {
		// A connection's port is lent for the tests, as for an upload.
		port, err := s.lentPort(a.Port)
		if err != nil {
			return nil, "", err
		}
		spec["port"] = port
	}
	if a.TestPort != "" {
		if !steps.IsPortPath(a.TestPort) {
			return nil, "", fmt.Errorf("test_port %q: not a port path", a.TestPort)
		}
		if err := s.checkPort(a.TestPort); err != nil {
			return nil, "", err
		}
		spec["test_port"] = a.TestPort
	}
	if a.WithoutUploading {
		spec["without_uploading"] = true
	}
	seq, err := stepSequence(steps.KindPIOTest, map[string]any{string(steps.KindPIOTest): spec})
	if err != nil {
		return nil, "", err
	}
	return s.runStepTool(ctx, req, steps.KindPIOTest, seq, a.Background, a.LockTimeoutMS)
}

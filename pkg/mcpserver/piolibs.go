package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/pio"
)

type searchArgs struct {
	Query string `json:"query"`
	Page  int    `json:"page"`
}

func (s *Server) pioSearch(ctx context.Context, _ mcp.CallToolRequest, a *searchArgs) (any, string, error) {
	res, err := s.pioClient(nil, nil).SearchLibraries(ctx, a.Query, a.Page)
	if err != nil {
		return nil, "", err
	}
	lines := []string{fmt.Sprintf("%d libraries (page %d of %d)", res.Total, res.Page, res.Pages)}
	for _, l := range res.Libraries {
		lines = append(lines, fmt.Sprintf("%s/%s %s: %s", l.Owner, l.Name, l.Version, l.Description))
	}
	return res, strings.Join(lines, "\n"), nil
}

type libraryArgs struct {
	projectArgs
	Library string `json:"library"`
}

func (s *Server) pioLibrary(verb pio.LibraryVerb, tool string) func(context.Context, mcp.CallToolRequest, *libraryArgs) (any, string, error) {
	return func(ctx context.Context, req mcp.CallToolRequest, a *libraryArgs) (any, string, error) {
		dir, err := s.pioDir(a.ProjectDir)
		if err != nil {
			return nil, "", err
		}
		if strings.TrimSpace(a.Library) == "" || strings.HasPrefix(a.Library, "-") {
			return nil, "", fmt.Errorf("library %q: give a library name or specification (owner/name@^1.2.3)", a.Library)
		}
		if err := pio.CheckProject(dir, a.env()); err != nil {
			return nil, "", err
		}
		return s.runPIOTask(ctx, req, tool, a.Background, func(ctx context.Context, c *pio.Client) (*pioResult, error) {
			out, err := c.Library(ctx, verb, dir, a.env(), a.Library)
			if err != nil {
				return nil, err
			}
			return outputResult(out), nil
		})
	}
}

type librariesResult struct {
	Libraries []pio.InstalledLibrary `json:"libraries"`
}

func (s *Server) pioListLibraries(ctx context.Context, _ mcp.CallToolRequest, a *projectArgs) (any, string, error) {
	dir, err := s.pioDir(a.ProjectDir)
	if err != nil {
		return nil, "", err
	}
	libs, err := s.pioClient(nil, nil).ListLibraries(ctx, dir, a.env())
	if err != nil {
		return nil, "", err
	}
	var lines []string
	for _, l := range libs {
		lines = append(lines, fmt.Sprintf("%s%s: %s @ %s (required: %s)", strings.Repeat("  ", l.Depth), l.Env, l.Name, l.Version, l.Required))
	}
	if len(lines) == 0 {
		lines = append(lines, "no libraries installed")
	}
	return librariesResult{Libraries: libs}, strings.Join(lines, "\n"), nil
}

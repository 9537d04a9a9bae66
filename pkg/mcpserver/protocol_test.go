package mcpserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// A resource that does not exist, or no longer does, is the MCP error
// -32002 (resource not found), with the reason, not -32603.
func TestMissingResourceIsNotFound(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	run := e.sequence(map[string]any{"steps": []any{map[string]any{"delay_ms": 1}}})
	gone := runReportURI(run.RunID)
	if err := os.Remove(filepath.Join(e.srv.logDir, "runs", run.RunID, "report.json")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, uri, reason string }{
		{"unknown run", "hilrun://runs/r999/report.json", "no run r999"},
		{"unknown scheme", "file:///etc/passwd", "unknown resource"},
		{"unknown connection", "hilrun://connections/c42/log", "no log for connection c42"},
		{"unknown task", "hilrun://tasks/t9/log", "no task t9"},
		{"file gone", gone, "its file is gone"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var req mcp.ReadResourceRequest
			req.Params.URI = tc.uri
			_, err := e.c.ReadResource(context.Background(), req)
			if !errors.Is(err, mcp.ErrResourceNotFound) {
				t.Fatalf("read %s: want -32002 resource not found, got %v", tc.uri, err)
			}
			if !strings.Contains(err.Error(), tc.uri) || !strings.Contains(err.Error(), tc.reason) {
				t.Errorf("read %s: the error %q does not name the URI and %q", tc.uri, err, tc.reason)
			}
		})
	}
	// A resource that exists still reads.
	if rep := readResource(t, e, runReportURI(e.sequence(map[string]any{"steps": []any{map[string]any{"delay_ms": 1}}}).RunID)); !strings.Contains(rep, "passed") {
		t.Errorf("report: %s", rep)
	}
}

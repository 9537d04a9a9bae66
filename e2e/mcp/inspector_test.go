//go:build unix

package mcpe2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/testenv"
)

// inspectorCLI is the MCP Inspector's launcher, from this folder's
// devDependencies (npm ci --prefix e2e/mcp).
var inspectorCLI = filepath.Join("node_modules", "@modelcontextprotocol", "inspector", "clients", "launcher", "build", "index.js")

// findingRE matches the lines with which the Inspector's --strict reports a
// schema portability finding ("Warning: tool ..." or "Error: tool ...").
var findingRE = regexp.MustCompile(`(?m)^(Warning|Error): tool `)

// TestInspectorStrict lists hilrun's tools with the real MCP Inspector CLI
// and its --strict schema check, which reports what clients that translate
// tool schemas for other model APIs reject: properties without a type,
// type arrays such as ["string", "null"], bare true schemas. It must find
// nothing.
func TestInspectorStrict(t *testing.T) {
	bin := prerequisites(t)
	if _, err := os.Stat(inspectorCLI); err != nil {
		needTool(t, "the MCP Inspector is missing from e2e/mcp/node_modules: run `npm ci --prefix e2e/mcp` from the repository root")
	}
	mark := randomHex(t, 8)
	t.Cleanup(func() { checkNoOrphans(t, mark) })
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	home := t.TempDir()
	var stdout, stderr testenv.Buffer
	cmd := exec.CommandContext(ctx, "node", inspectorCLI, "--cli", "--format", "json",
		bin, "mcp", "--sim", "--method", "tools/list", "--strict")
	// The Inspector keeps a catalog of servers under HOME.
	cmd.Env = append(markedEnv(mark), "HOME="+home, "MCP_CATALOG_PATH="+filepath.Join(home, "mcp.json"))
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	groupCommand(cmd)
	start := time.Now()
	err := cmd.Run()
	if cmd.Process != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
	t.Logf("inspector --cli --strict tools/list: %s", time.Since(start).Round(time.Millisecond))
	if ctx.Err() != nil {
		t.Fatalf("the Inspector did not finish within %s\nstderr:\n%s", runTimeout, stderr.String())
	}
	if err != nil {
		t.Fatalf("the Inspector failed: %v\nstderr:\n%s", err, stderr.String())
	}
	var out struct {
		Result struct {
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"result"`
		SchemaFindings []json.RawMessage `json:"schemaFindings"`
	}
	if err := json.Unmarshal([]byte(strings.TrimSpace(stdout.String())), &out); err != nil {
		t.Fatalf("the Inspector's output is not one JSON document: %v\n%s", err, stdout.String())
	}
	if len(out.Result.Tools) < 10 {
		t.Fatalf("the Inspector listed %d tools: %s", len(out.Result.Tools), stdout.String())
	}
	if n := len(findingRE.FindAllString(stderr.String(), -1)); n > 0 || len(out.SchemaFindings) > 0 {
		t.Errorf("the Inspector's --strict reports %d schema findings:\n%s", n, stderr.String())
	}
	if strings.Contains(stderr.String(), "Schema portability") {
		t.Errorf("the Inspector reports schema portability problems:\n%s", stderr.String())
	}
	t.Logf("%d tools, no findings", len(out.Result.Tools))
}

package cli_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/internal/cli"
)

// TestMCPHTTPFlags checks that hilrun mcp --http refuses a weak token and
// bad HTTP limits before it serves anything: exit 2 and a message naming
// the flag or variable. The bench file that does not exist is read after
// these checks; without them the command would end there instead, or
// serve.
func TestMCPHTTPFlags(t *testing.T) {
	const good = "0123456789abcdef0123"
	tests := []struct {
		name   string
		env    string // HILRUN_MCP_TOKEN
		args   []string
		stderr string
	}{
		{"blank --token", "", []string{"--token", "   "}, "--token: the bearer token is blank"},
		{"empty --token", "", []string{"--token", ""}, "--token: the bearer token is blank"},
		{"short --token", "", []string{"--token", "s3cret"}, "--token: the bearer token has 6 characters, a secret needs at least 16"},
		{"--token with a blank", "", []string{"--token", "0123456789 abcdef"}, "--token: the bearer token has blanks"},
		{"blank HILRUN_MCP_TOKEN", " \t ", nil, "HILRUN_MCP_TOKEN: the bearer token is blank"},
		{"short HILRUN_MCP_TOKEN", "abc", nil, "HILRUN_MCP_TOKEN: the bearer token has 3 characters"},
		{"short --token wins over a good HILRUN_MCP_TOKEN", good, []string{"--token", "short"}, "--token: the bearer token has 5 characters"},
		{"--allow-origin that is not an origin", "", []string{"--allow-origin", "*"}, `--allow-origin: "*" is not an origin`},
		{"--allow-origin with a path", "", []string{"--allow-origin", "https://lab.example.com/mcp"}, "is not an origin"},
		{"--max-body 0", "", []string{"--max-body", "0"}, `"0" is not a size`},
		{"--max-body that is not a number", "", []string{"--max-body", "lots"}, `"lots" is not a size`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("HILRUN_MCP_TOKEN", tt.env)
			args := append([]string{"mcp", "--http", "127.0.0.1:0", "--bench", "/nonexistent/hilrun.bench.yaml"}, tt.args...)
			var out, errOut bytes.Buffer
			code := cli.Main(args, strings.NewReader(""), &out, &errOut)
			if code != cli.ExitInvalid {
				t.Errorf("exit code %d, want %d\nstderr:\n%s", code, cli.ExitInvalid, errOut.String())
			}
			if !strings.Contains(errOut.String(), tt.stderr) {
				t.Errorf("stderr does not say %q:\n%s", tt.stderr, errOut.String())
			}
		})
	}
	// The same token without --http is no error: stdio has no token.
	t.Setenv("HILRUN_MCP_TOKEN", "abc")
	var out, errOut bytes.Buffer
	if code := cli.Main([]string{"mcp", "--bench", "/nonexistent/hilrun.bench.yaml"}, strings.NewReader(""), &out, &errOut); strings.Contains(errOut.String(), "token") {
		t.Errorf("exit %d, stderr:\n%s", code, errOut.String())
	}
}

// hilrun mcp --help names every limit the server holds a client to, and
// the flag that raises it.
func TestMCPHelpNamesLimits(t *testing.T) {
	var out, errOut bytes.Buffer
	if code := cli.Main([]string{"mcp", "--help"}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("exit %d: %s", code, errOut.String())
	}
	for _, want := range []string{
		"4 MiB", "100000 nodes", "4 MiB of text", "--max-expr-work", "--max-expr-memory", "100000000 steps", "--max-value", "--max-steps", "--max-runs", "--max-run-age",
		"--max-body", "--min-body-rate", "1 KiB/s", "100000 JSON items", "1000 steps and 1 MiB", "1000 sessions", "--allow-exec", "--allow-debug-tcl", "--read-only", "--pass-env",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("hilrun mcp --help does not name %q", want)
		}
	}
}

package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// TestMCPRecoverFlag: hilrun mcp --recover=false serves the --bench file
// without its health check and ladder; by default it keeps them.
func TestMCPRecoverFlag(t *testing.T) {
	bench := filepath.Join(t.TempDir(), "lab.bench.yaml")
	if err := os.WriteFile(bench, []byte("health:\n  - send: echo alive\n    expect: alive\nrecover:\n  - send: reboot\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args   []string
		ladder bool
	}{
		{[]string{"--bench", bench}, true},
		{[]string{"--bench", bench, "--recover"}, true},
		{[]string{"--bench", bench, "--recover=false"}, false},
	} {
		opts := &MCPOptions{}
		f := pflag.NewFlagSet("mcp", pflag.ContinueOnError)
		opts.register(f)
		if err := f.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		cfg, err := mcpConfig(&IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if got := cfg.Bench.Ladder != nil; got != tc.ladder {
			t.Errorf("%v: the server's bench has a ladder: %t, want %t", tc.args, got, tc.ladder)
		}
	}
}

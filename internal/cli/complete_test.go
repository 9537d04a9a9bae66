package cli_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/internal/cli"
)

// TestCompletions checks what the shell is offered: sequence files for
// the arguments, and the names the sequences on the line declare for the
// binding flags.
func TestCompletions(t *testing.T) {
	tests := []struct {
		name string
		args []string
		want []string
		not  []string
	}{
		{"sequence files", []string{"run", "seq"}, []string{"yaml\n", "yml\n", "json\n", ":8\n"}, nil},
		{"devices for --port", []string{"run", "../../sequences/sim/smoke.yaml", "--port", ""}, []string{"console=\n", ":2\n"}, []string{"board="}},
		{"probes for --gdb", []string{"validate", "../../sequences/sim/memory.yaml", "--gdb", ""}, []string{"board=\n"}, []string{"console="}},
		{"probes for --openocd in repl", []string{"repl", "../../sequences/sim/memory.yaml", "--openocd", ""}, []string{"board=\n"}, nil},
		{"a path after NAME=", []string{"run", "../../sequences/sim/smoke.yaml", "--port", "console=/dev/tty"}, []string{":0\n"}, []string{"console="}},
		{"a file that does not load offers nothing", []string{"run", "no-such.yaml", "--port", ""}, []string{":2\n"}, []string{"="}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := cli.MainIO(append([]string{"__complete"}, tt.args...), &cli.IO{In: strings.NewReader(""), Out: &out, ErrOut: &errOut})
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut.String())
			}
			for _, w := range tt.want {
				if !strings.Contains(out.String(), w) {
					t.Errorf("completion %q lacks %q:\n%s", tt.args, w, out.String())
				}
			}
			for _, n := range tt.not {
				if strings.Contains(out.String(), n) {
					t.Errorf("completion %q offers %q:\n%s", tt.args, n, out.String())
				}
			}
		})
	}
}

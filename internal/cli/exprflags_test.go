package cli_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/internal/cli"
)

// hilrun run holds a sequence file's expressions to the budgets of
// --max-expr-work and --max-expr-memory, and says which flag raises the one
// an expression ran out of.
func TestRunExprBudgetFlags(t *testing.T) {
	file := filepath.Join(t.TempDir(), "expr.yaml")
	src := "steps:\n  - set: {l: {expr: 'split(\"a,b,c,d,e,f,g,h\", \",\")'}}\n  - assert: 'all(l, {all(l, {true})})'\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		flags []string
		code  int
		want  string
	}{
		{"within the defaults", nil, cli.ExitPassed, ""},
		{"a lower work budget", []string{"--max-expr-work", "20"}, cli.ExitInfra, "work budget of 20 operations for one evaluation (1:13) (--max-expr-work raises it)"},
		{"a lower memory budget", []string{"--max-expr-memory", "64"}, cli.ExitInfra, "lists and maps of more than 64 bytes, past the expression memory budget of one evaluation (1:1) (--max-expr-memory raises it)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := hilrun(append(append([]string{"run"}, tt.flags...), file)...)
			if code != tt.code || !strings.Contains(out+errOut, tt.want) {
				t.Errorf("exit %d, want %d and %q in:\n%s%s", code, tt.code, tt.want, out, errOut)
			}
		})
	}
}

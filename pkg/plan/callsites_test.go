package plan_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// calls lists the uses of fn of the package imported as path in the
// non-test Go files under dir, as file:line, package plan's own aside.
func calls(t *testing.T, dir, path, fn string) []string {
	t.Helper()
	var found []string
	err := filepath.WalkDir(dir, func(file string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(file, ".go") || strings.HasSuffix(file, "_test.go") || filepath.Base(filepath.Dir(file)) == "plan" {
			return err
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			return err
		}
		pkg := ""
		for _, imp := range f.Imports {
			if strings.Trim(imp.Path.Value, `"`) == path {
				pkg = filepath.Base(path)
				if imp.Name != nil {
					pkg = imp.Name.Name
				}
			}
		}
		if pkg == "" {
			return nil
		}
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok || sel.Sel.Name != fn {
				return true
			}
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == pkg {
				found = append(found, fset.Position(sel.Pos()).String())
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestOneBindingFunction: the commands and the MCP server reach the runner
// through Bind, each from one place, and nothing but a plan calls
// runner.Run (the benchmark harness under bench/ aside).
func TestOneBindingFunction(t *testing.T) {
	for _, dir := range []string{"../../internal/cli", "../mcpserver"} {
		if got := calls(t, dir, "github.com/hilrun/hilrun/pkg/plan", "Bind"); len(got) != 1 {
			t.Errorf("%s calls plan.Bind %d times, want once: %v", dir, len(got), got)
		}
	}
	for _, dir := range []string{"../../internal", "../../cmd", ".."} {
		for _, c := range calls(t, dir, "github.com/hilrun/hilrun/pkg/runner", "Run") {
			t.Errorf("%s: runner.Run outside package plan: run a plan instead", c)
		}
	}
}

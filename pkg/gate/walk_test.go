package gate_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// A finding is one effect outside its gate: where, and what.
type finding struct {
	pos  token.Position
	what string
}

func (f finding) String() string {
	return fmt.Sprintf("%s:%d: %s", filepath.ToSlash(f.pos.Filename), f.pos.Line, f.what)
}

// rules say what is an effect, and which gate it belongs in.
type rules struct {
	// calls maps an imported package's path to its functions and types
	// that have an effect, each with the gate it belongs in; "" as a name
	// means importing the package at all.
	calls map[string]map[string]string
	// fileCalls are the os functions that open a named file: effects only
	// in the packages that handle sequences and requests (fileDirs).
	fileCalls map[string]bool
	fileDirs  []string
	// hostOnly are calls that take the user's own environment, allowed
	// only in the commands and the wiring (hostDirs).
	hostOnly map[string]map[string]bool
	hostDirs []string
}

var gateRules = rules{
	calls: map[string]map[string]string{
		"os/exec": {"": "pkg/gate/process"},
		"os": {
			"StartProcess": "pkg/gate/process",
			"Environ":      "pkg/gate/environ", "Getenv": "pkg/gate/environ", "LookupEnv": "pkg/gate/environ",
		},
		"syscall": {
			"Exec": "pkg/gate/process", "ForkExec": "pkg/gate/process", "StartProcess": "pkg/gate/process",
			"Environ": "pkg/gate/environ", "Getenv": "pkg/gate/environ",
		},
		"golang.org/x/sys/unix": {"Exec": "pkg/gate/process"},
		"net": {
			"Dial": "pkg/gate/dial", "DialTimeout": "pkg/gate/dial", "DialTCP": "pkg/gate/dial",
			"DialUDP": "pkg/gate/dial", "DialUnix": "pkg/gate/dial", "DialIP": "pkg/gate/dial",
			"Dialer": "pkg/gate/dial",
		},
		"go.bug.st/serial": {"Open": "pkg/gate/devices"},
	},
	fileCalls: map[string]bool{"Open": true, "OpenFile": true, "ReadFile": true, "Create": true, "WriteFile": true, "OpenInRoot": true},
	fileDirs:  []string{"pkg/steps", "pkg/runner", "pkg/mcpserver", "pkg/repl", "pkg/report"},
	hostOnly: map[string]map[string]bool{
		"github.com/hilrun/hilrun/pkg/gate/environ": {"Host": true},
		"github.com/hilrun/hilrun/pkg/gate":         {"Permissive": true},
		"github.com/hilrun/hilrun/pkg/gate/process": {"Permit": true},
		"github.com/hilrun/hilrun/pkg/gate/files":   {"Anywhere": true},
		"github.com/hilrun/hilrun/pkg/gate/dial":    {"Anywhere": true},
		"github.com/hilrun/hilrun/pkg/gate/devices": {"Anywhere": true},
	},
	hostDirs: []string{"cmd", "internal/cli", "internal/engine"},
}

// walk lists the effects outside their gates in the non-test Go files
// under root, skipping the folders skip lists (relative to root). Paths in
// findings are relative to root.
func walk(root string, r rules, skip map[string]string) ([]finding, error) {
	var out []finding
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if _, ok := skip[rel]; ok || d.Name() == "testdata" || d.Name() == "node_modules" || strings.HasPrefix(d.Name(), ".") && rel != "." {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir := filepath.ToSlash(filepath.Dir(rel))
		out = append(out, r.check(fset, f, rel, dir)...)
		return nil
	})
	return out, err
}

func under(dir string, dirs []string) bool {
	return slices.ContainsFunc(dirs, func(d string) bool { return dir == d || strings.HasPrefix(dir, d+"/") })
}

func (r rules) check(fset *token.FileSet, f *ast.File, rel, dir string) []finding {
	var out []finding
	at := func(p token.Pos) token.Position {
		pos := fset.Position(p)
		pos.Filename = rel
		return pos
	}
	names := map[string]string{} // local name -> import path
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		name := filepath.Base(path)
		if path == "go.bug.st/serial" {
			name = "serial"
		}
		if imp.Name != nil {
			name = imp.Name.Name
		}
		names[name] = path
		if g, ok := r.calls[path][""]; ok {
			out = append(out, finding{at(imp.Pos()), fmt.Sprintf("imports %s: start programs through %s", path, g)})
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		x, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		path, ok := names[x.Name]
		if !ok {
			return true
		}
		name := sel.Sel.Name
		if g, ok := r.calls[path][name]; ok && name != "" {
			out = append(out, finding{at(sel.Pos()), fmt.Sprintf("%s.%s: this effect goes through %s", x.Name, name, g)})
		}
		if path == "os" && r.fileCalls[name] && under(dir, r.fileDirs) {
			out = append(out, finding{at(sel.Pos()), fmt.Sprintf("os.%s in a package that handles sequences and requests: open named files through pkg/gate/files", name)})
		}
		if r.hostOnly[path][name] && !under(dir, r.hostDirs) {
			out = append(out, finding{at(sel.Pos()), fmt.Sprintf("%s.%s gives the user's own environment or every permission: only the commands and the wiring (%s) decide that; take a policy from the caller", x.Name, name, strings.Join(r.hostDirs, ", "))})
		}
		return true
	})
	return out
}

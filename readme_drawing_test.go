package hilrun_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// isDrawing says whether a plain block is a drawing of the house: it has
// box-drawing lines or arrows.
func isDrawing(text string) bool { return strings.ContainsAny(text, "─│┌┐└┘┼┤├▶") }

// drawingNameRE finds the Go names a drawing shows: pkg.Name or
// dir/pkg.Name (runner.Bench, internal/engine.NewBench, plan.Bind).
var drawingNameRE = regexp.MustCompile(`\b((?:[a-z]+/)*[a-z]+)\.([A-Z][A-Za-z0-9]*)\b`)

// checkDrawing checks that every name a drawing shows is declared in the
// package it names, so the drawing cannot name a function or type that
// was renamed or removed. A package is looked for as written, then under
// pkg/ and internal/.
func checkDrawing(t *testing.T, b readmeBlock) {
	t.Helper()
	names := drawingNameRE.FindAllStringSubmatch(b.text, -1)
	if len(names) == 0 {
		t.Errorf("%s: a drawing that names no Go package's name (pkg.Name): nothing ties it to the source", b.pos())
		return
	}
	decls := map[string]map[string]bool{}
	for _, m := range names {
		pkg, name := m[1], m[2]
		dir := drawingPackageDir(pkg)
		if dir == "" {
			t.Errorf("%s: the drawing names %s.%s, but there is no package %s (looked as written, under pkg/ and under internal/)", b.pos(), pkg, name, pkg)
			continue
		}
		if decls[dir] == nil {
			decls[dir] = declaredNames(t, dir)
		}
		if !decls[dir][name] {
			t.Errorf("%s: the drawing names %s.%s, which %s does not declare", b.pos(), pkg, name, dir)
		}
	}
}

func drawingPackageDir(pkg string) string {
	for _, dir := range []string{pkg, filepath.Join("pkg", pkg), filepath.Join("internal", pkg)} {
		if fi, err := os.Stat(dir); err == nil && fi.IsDir() {
			return dir
		}
	}
	return ""
}

// declaredNames lists the top-level names and method names declared in the
// non-test Go files of dir.
func declaredNames(t *testing.T, dir string) map[string]bool {
	t.Helper()
	fset := token.NewFileSet()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			switch d := d.(type) {
			case *ast.FuncDecl:
				out[d.Name.Name] = true
			case *ast.GenDecl:
				for _, s := range d.Specs {
					switch s := s.(type) {
					case *ast.TypeSpec:
						out[s.Name.Name] = true
					case *ast.ValueSpec:
						for _, n := range s.Names {
							out[n.Name] = true
						}
					}
				}
			}
		}
	}
	return out
}

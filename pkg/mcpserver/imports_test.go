package mcpserver

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNoBackendImports: the server knows debuggers only through the
// runner's typed interface and the bench (runner.Bench.ParseCommand for
// OpenOCD's command grammar), never by importing a probe backend, so a new
// backend needs no change here.
func TestNoBackendImports(t *testing.T) {
	backends := []string{"github.com/hilrun/hilrun/pkg/openocd", "github.com/hilrun/hilrun/pkg/gdbremote", "github.com/hilrun/hilrun/pkg/qemu"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		pf, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range pf.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, b := range backends {
				if p == b {
					t.Errorf("%s imports %s: reach the debugger through runner.Debugger's abilities and the bench instead", f, p)
				}
			}
		}
	}
}

package gate_test

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// repo is the repository's root, from this package's folder.
const repo = "../.."

// exempt are the folders whose effects need no gate, each with why. Every
// other folder starts programs, opens named files, dials, opens devices
// and reads the environment only through the gates.
var exempt = map[string]string{
	"pkg/gate":            "the gates themselves",
	"bench":               "the benchmark harness: it measures hilrun beside its peers, which it starts and dials as a user would",
	"internal/cdp":        "a test helper (headless Chromium for the HTML report's tests), imported only by tests",
	"internal/ser2net":    "a test helper (Debian's ser2net in front of a pty), imported only by tests",
	"internal/reporttest": "a test helper (a million-step log folder for tests and benchmarks), imported only by tests and bench/",
	"pkg/testenv":         "a test helper (a missing tool skips, or fails under CI=true), imported only by tests",
	"pkg/pio/piotest":     "a test helper (recorded PlatformIO output), imported only by tests",
	"pkg/qemu/qemutest":   "a test helper (our firmware built and run under QEMU), imported only by tests and bench/",
	"e2e":                 "end-to-end tests",
	"firmware":            "firmware sources and their tests",
	"sequences":           "example sequences and their tests",
}

// TestGates: nothing outside the gates starts a program, dials an
// address, opens a device or reads the environment, and the packages
// that handle sequences and requests open named files only through the
// files gate. The findings name FILE:LINE and the gate to use.
func TestGates(t *testing.T) {
	found, err := walk(repo, gateRules, exempt)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s", f)
	}
	for dir := range exempt {
		if _, err := os.Stat(filepath.Join(repo, dir)); err != nil {
			t.Errorf("exempt lists %s, which is gone: remove it", dir)
		}
	}
}

// TestGatesFindALeak: the walk finds each kind of effect in a fixture
// package that has one of each outside its gate, so TestGates cannot pass
// by finding nothing.
func TestGatesFindALeak(t *testing.T) {
	r := gateRules
	r.fileDirs = []string{"leaky"}
	found, err := walk("testdata/fixture", r, nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range found {
		got = append(got, f.String())
	}
	want := []string{
		`leaky/leaky.go:8: imports os/exec: start programs through pkg/gate/process`,
		`leaky/leaky.go:17: exec.Command`, // importing is the finding; the call is not listed again
		`leaky/leaky.go:18: os.StartProcess: this effect goes through pkg/gate/process`,
		`leaky/leaky.go:19: syscall.Exec: this effect goes through pkg/gate/process`,
		`leaky/leaky.go:20: net.Dial: this effect goes through pkg/gate/dial`,
		`leaky/leaky.go:21: net.Dialer: this effect goes through pkg/gate/dial`,
		`leaky/leaky.go:23: os.Getenv: this effect goes through pkg/gate/environ`,
		`leaky/leaky.go:24: os.Environ: this effect goes through pkg/gate/environ`,
		`leaky/leaky.go:25: serial.Open: this effect goes through pkg/gate/devices`,
		`leaky/leaky.go:26: os.ReadFile in a package that handles sequences and requests: open named files through pkg/gate/files`,
		`leaky/leaky.go:27: environ.Host gives the user's own environment`,
	}
	for _, w := range want {
		if strings.HasSuffix(w, "exec.Command") {
			if slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, w) }) {
				t.Errorf("exec.Command is listed as well as the import: %v", got)
			}
			continue
		}
		if !slices.ContainsFunc(got, func(g string) bool { return strings.HasPrefix(g, w) }) {
			t.Errorf("the walk did not find %q; it found:\n%s", w, strings.Join(got, "\n"))
		}
	}
	if len(got) != len(want)-1 {
		t.Errorf("found %d effects, want %d:\n%s", len(got), len(want)-1, strings.Join(got, "\n"))
	}
}

// TestExemptHelpersOnlyInTests: the test helpers the gate test exempts
// are imported only by tests, by the benchmark harness or by other
// exempt folders, so no command or library reaches their effects.
func TestExemptHelpersOnlyInTests(t *testing.T) {
	helpers := map[string]bool{}
	for dir, why := range exempt {
		if strings.HasPrefix(why, "a test helper") {
			helpers["github.com/hilrun/hilrun/"+dir] = true
		}
	}
	err := filepath.WalkDir(repo, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repo, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if d.Name() == "node_modules" || d.Name() == "testdata" || (strings.HasPrefix(d.Name(), ".") && rel != ".") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		if dir := filepath.ToSlash(filepath.Dir(rel)); exemptDir(dir) {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if helpers[p] {
				t.Errorf("%s imports the test helper %s, which the gate test exempts as used by tests only", rel, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func exemptDir(dir string) bool {
	for d := range exempt {
		if dir == d || strings.HasPrefix(dir, d+"/") {
			return true
		}
	}
	return false
}

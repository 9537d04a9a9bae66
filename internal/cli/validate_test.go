package cli_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/qemu/qemutest"

	"github.com/hilrun/hilrun/internal/cli"
)

func hilrun(args ...string) (code int, stdout, stderr string) {
	var out, errOut bytes.Buffer
	code = cli.Main(args, strings.NewReader(""), &out, &errOut)
	return code, out.String(), errOut.String()
}

// The CI example of the README and docs/ci.md validates the board
// sequences and their bench file; it must pass on the repository as it
// is.
func TestReadmeValidateExample(t *testing.T) {
	files, err := filepath.Glob("../../sequences/boards/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no board sequences: %v", err)
	}
	code, out, errOut := hilrun(append([]string{"validate"}, files...)...)
	if code != cli.ExitPassed {
		t.Fatalf("hilrun validate sequences/boards/*.yaml: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "hilrun.bench.yaml: ok (bench:") {
		t.Errorf("the bench file is not reported as one:\n%s", out)
	}
}

// What validate passes, run does not refuse as invalid input, and what
// validate refuses, run refuses before it touches anything: each file goes
// through both with the same flags. The one difference is a file that a
// build makes and that is not there yet: validate notes it (it checks a
// checkout before anything is built), run refuses it.
func TestValidateAgreesWithRun(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"ok.yaml":      "name: ok\nsteps:\n  - send: version\n    expect: hilrun-sim\n",
		"noimage.yaml": "name: noimage\nprobes: {board: {}}\nsteps:\n  - upload:\n      openocd: {file: missing.bin, method: load, offset: 0x20008000}\n",
		"built.yaml":   "name: built\nprobes: {board: {}}\nsteps:\n  - build:\n      command: [\"true\"]\n  - upload:\n      openocd: {file: missing.bin, method: load, offset: 0x20008000}\n",
		"nopower.yaml": "name: nopower\nsteps:\n  - power: cycle\n",
		"tcl.yaml":     "name: tcl\nprobes: {stub: {gdb: \"127.0.0.1:1\"}}\nsteps:\n  - {openocd: halt, probe: stub}\n",
		"symbol.yaml":  "name: symbol\nprobes: {board: {elf: nothere.elf}}\nsteps:\n  - mem_read: true\n    symbol: counter\n",
	}
	for name, src := range files {
		writeFile(t, dir, name, src)
	}
	for _, f := range []string{"smoke.yaml", "memory.yaml", "failfast.yaml", "stream.yaml", "seed-serial-sequence.json"} {
		src, err := os.ReadFile(filepath.Join("../../sequences/sim", f))
		if err != nil {
			t.Fatal(err)
		}
		// memory.yaml names the firmware image relative to itself.
		writeFile(t, dir, f, strings.ReplaceAll(string(src), "../../firmware/sim/sim.elf", mustAbs(t, "../../firmware/sim/sim.elf")))
	}
	for _, tc := range []struct {
		file      string
		valid     bool
		wantError string
		// noted: validate passes with a note; run refuses with wantError.
		noted bool
	}{
		{"smoke.yaml", true, "", false},
		{"memory.yaml", true, "", false},
		{"failfast.yaml", true, "", false},
		{"stream.yaml", true, "", false},
		{"seed-serial-sequence.json", true, "", false},
		{"ok.yaml", true, "", false},
		{"noimage.yaml", false, "noimage.yaml:4:5: upload: image file", true},
		{"built.yaml", true, "", false},
		{"nopower.yaml", false, "nopower.yaml:3:5: power: no power entry", false},
		{"tcl.yaml", false, "tcl.yaml:4:5: an openocd step sends OpenOCD Tcl", false},
		{"symbol.yaml", false, "symbol.yaml:4:5: ", true},
	} {
		t.Run(tc.file, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			code, out, errOut := hilrun("validate", "--sim", path)
			if tc.noted {
				if code != cli.ExitPassed || !strings.Contains(errOut, "note: "+path+":4:5: ") || !strings.Contains(errOut, "is not there yet") {
					t.Errorf("validate: exit %d, want 0 with a note on line 4:\n%s%s", code, out, errOut)
				}
			} else if tc.valid != (code == cli.ExitPassed) {
				t.Fatalf("validate: exit %d\n%s%s", code, out, errOut)
			}
			if !tc.valid && !tc.noted {
				if code != cli.ExitInvalid || !strings.Contains(errOut, tc.wantError) {
					t.Errorf("validate: exit %d, want 2 with %q:\n%s", code, tc.wantError, errOut)
				}
			}
			rcode, rout, rerr := hilrun("run", "--sim", path)
			if tc.valid && rcode == cli.ExitInvalid {
				t.Errorf("validate passed, run refused it:\n%s%s", rout, rerr)
			}
			if !tc.valid && (rcode != cli.ExitInvalid || !strings.Contains(rerr, tc.wantError)) {
				t.Errorf("validate refused it, run: exit %d\n%s%s", rcode, rout, rerr)
			}
		})
	}
}

// A --var that no sequence uses is most likely a typo: both validate and
// run warn about it, and both still pass.
func TestUnusedVarWarns(t *testing.T) {
	dir := t.TempDir()
	seq := writeFile(t, dir, "v.yaml", "name: v\nvars: {fw: \"1.0\"}\nsteps:\n  - send: \"echo ${fw} ${board}\"\n    expect: \"1.0\"\n")
	code, out, errOut := hilrun("validate", "--var", "fv=2.0", "--var", "board=x", seq)
	if code != cli.ExitPassed {
		t.Fatalf("validate: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(errOut, `--var fv: no sequence uses a variable "fv"`) {
		t.Errorf("no warning about --var fv:\n%s", errOut)
	}
	if strings.Contains(errOut, "--var board") {
		t.Errorf("a warning about --var board, which the sequence uses:\n%s", errOut)
	}
}

// Every sequence file the README or a page under docs/ names is there and
// passes validate, as run would get it: the virtual board's with --sim,
// the boards' with their bench file (they need hardware to run, so they
// are validated only).
func TestReadmeFilesValidate(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var text []byte
	for _, p := range append([]string{"../../README.md"}, pages...) {
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		text = append(text, src...)
	}
	names := regexp.MustCompile(`sequences/[A-Za-z0-9_./-]+\.(?:yaml|json)`).FindAllString(string(text), -1)
	if len(names) == 0 {
		t.Fatal("the README and docs/ name no sequence file")
	}
	seen := map[string]bool{}
	builtQEMU := false
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		args := []string{"validate", filepath.Join("../..", name)}
		if strings.HasPrefix(name, "sequences/qemu/") && !builtQEMU {
			// Their probes name the firmware's ELF, which the docs
			// build with make -C firmware/qemu.
			qemutest.BuildInTree(t)
			builtQEMU = true
		}
		if strings.HasPrefix(name, "sequences/sim/") {
			args = []string{"validate", "--sim", filepath.Join("../..", name)}
		}
		code, out, errOut := hilrun(args...)
		if code != cli.ExitPassed {
			t.Errorf("the documentation names %s: hilrun %s: exit %d\n%s%s", name, strings.Join(args, " "), code, out, errOut)
		}
	}
}

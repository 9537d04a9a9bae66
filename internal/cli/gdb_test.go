package cli_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/internal/cli"
)

// A probe on a GDB remote stub: an openocd step on it is invalid input,
// found before anything opens; a monitor step is valid, and a stub that
// cannot be reached is a bench error.
func TestGDBProbeExitCodes(t *testing.T) {
	dir := t.TempDir()
	tcl := writeFile(t, dir, "tcl.yaml", "steps:\n  - halt: true\n  - openocd: reg pc\n")
	monitor := writeFile(t, dir, "monitor.yaml", "steps:\n  - monitor: info registers\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"openocd step on gdb", []string{"run", "--gdb", "target=127.0.0.1:1", tcl}, cli.ExitInvalid, tcl + ":3:5: an openocd step sends OpenOCD Tcl, and probe target is a gdb probe"},
		{"openocd step on gdb, repl", []string{"repl", "--gdb", "target=127.0.0.1:1", tcl}, cli.ExitInvalid, tcl + ":3:5: an openocd step sends OpenOCD Tcl"},
		{"monitor step on gdb", []string{"run", "--gdb", "target=127.0.0.1:1", monitor}, cli.ExitInfra, "ERROR monitor: probe target: "},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := cli.Main(tc.args, strings.NewReader(""), &out, &errOut)
			if code != tc.code {
				t.Errorf("exit code %d, want %d\n%s%s", code, tc.code, out.String(), errOut.String())
			}
			if !strings.Contains(out.String()+errOut.String(), tc.want) {
				t.Errorf("the output does not say %q:\n%s%s", tc.want, out.String(), errOut.String())
			}
		})
	}
}

// hilrun mcp --gdb binds a probe to a GDB stub as a bench entry would; an
// address that is neither HOST:PORT nor a path is invalid input.
func TestMCPGDBFlag(t *testing.T) {
	var out, errOut bytes.Buffer
	code := cli.Main([]string{"mcp", "--gdb", "p=qemu"}, strings.NewReader(""), &out, &errOut)
	if code != cli.ExitInvalid || !strings.Contains(errOut.String(), "--gdb p=qemu: want HOST:PORT") {
		t.Errorf("exit %d\n%s%s", code, out.String(), errOut.String())
	}
}

// --gdb takes the attach mode after the address, as ?attach=MODE; a mode
// that is none is invalid input, whichever command is given it.
func TestGDBAttachFlag(t *testing.T) {
	dir := t.TempDir()
	seq := writeFile(t, dir, "seq.yaml", "probes:\n  q:\nsteps:\n  - halt: true\n")
	want := `attach=later in "127.0.0.1:1?attach=later": want running, halted or auto`
	for _, tc := range []struct {
		name string
		args []string
		code int
	}{
		{"validate, a good mode", []string{"validate", "--gdb", "q=127.0.0.1:1?attach=running", seq}, cli.ExitPassed},
		{"validate", []string{"validate", "--gdb", "q=127.0.0.1:1?attach=later", seq}, cli.ExitInvalid},
		{"run", []string{"run", "--gdb", "q=127.0.0.1:1?attach=later", seq}, cli.ExitInvalid},
		{"mcp", []string{"mcp", "--gdb", "q=127.0.0.1:1?attach=later"}, cli.ExitInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := cli.Main(tc.args, strings.NewReader(""), &out, &errOut)
			if code != tc.code {
				t.Errorf("exit code %d, want %d\n%s%s", code, tc.code, out.String(), errOut.String())
			}
			if tc.code == cli.ExitInvalid && !strings.Contains(errOut.String(), want) {
				t.Errorf("the output does not say %q:\n%s%s", want, out.String(), errOut.String())
			}
		})
	}
}

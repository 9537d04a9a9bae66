package cli_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/internal/cli"
)

// TestExitCodes runs hilrun in-process and checks the exit code of each
// kind of outcome: CI pipelines branch on them.
func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	// Runs without --log-dir keep pictures and command output in a
	// temporary folder: this test's.
	t.Setenv("TMPDIR", dir)
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	pass := write("pass.yaml", "steps:\n  - send: version\n    expect: hilrun-sim\n")
	fail := write("fail.yaml", "steps:\n  - send: version\n    expect: nope\n    timeout: 100ms\n")
	bad := write("bad.yaml", "steps:\n  - sned: x\n")
	unbound := write("unbound.yaml", "steps:\n  - send: x\n")
	noCamera := write("nocamera.yaml", "cameras: {cam: /dev/video99}\nsteps:\n  - capture: {camera: cam}\n")
	noTool := write("notool.yaml", "steps:\n  - exec: [hilrun-no-such-tool]\n")
	exitCode := write("exitcode.yaml", "steps:\n  - exec: [sh, -c, 'exit 4']\n")
	noPower := write("nopower.yaml", "steps:\n  - power: {device: dut, action: cycle}\n")
	failedPower := write("failedpower.yaml", "power: {dut: {on: [\"false\"], off: [\"true\"]}}\nsteps:\n  - power: {device: dut, action: cycle}\n")
	ptyLines := write("ptylines.yaml", "steps:\n  - reset_sequence: esp32\n")
	bomb := "x:\n  a0: &a0 [{delay: 1ms}, {delay: 1ms}]\n"
	for i := 1; i < 30; i++ {
		p := fmt.Sprintf("*a%d", i-1)
		bomb += fmt.Sprintf("  a%d: &a%d [%s]\n", i, i, strings.Repeat(p+", ", 8)+p)
	}
	aliasBomb := write("bomb.yaml", bomb+"steps:\n  - group: g\n    steps: *a29\n")
	bigFile := write("big.yaml", "steps:\n"+strings.Repeat("  - delay: 1ms\n", 300_000))
	tests := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"passed", []string{"run", "--sim", pass}, cli.ExitPassed, ""},
		{"a step failed", []string{"run", "--sim", fail}, cli.ExitFailed, ""},
		{"invalid sequence", []string{"run", "--sim", bad}, cli.ExitInvalid, "bad.yaml:2:5: unknown step kind"},
		{"missing file", []string{"run", "--sim", filepath.Join(dir, "nope.yaml")}, cli.ExitInvalid, "no such file"},
		{"unknown flag", []string{"run", "--nope", pass}, cli.ExitInvalid, "unknown flag"},
		{"unknown command", []string{"frobnicate"}, cli.ExitInvalid, "unknown command"},
		{"bad --var", []string{"run", "--var", "novalue", pass}, cli.ExitInvalid, "expected NAME=VALUE"},
		{"unbound device", []string{"run", unbound}, cli.ExitInvalid, "device console has no port"},
		{"port that does not exist", []string{"run", "--port", "console=/dev/hilrun-no-such-port", unbound}, cli.ExitInfra, "/dev/hilrun-no-such-port"},
		{"camera not plugged in", []string{"run", noCamera}, cli.ExitInfra, "/dev/video99 does not exist"},
		{"host tool not installed", []string{"run", noTool}, cli.ExitInfra, "hilrun-no-such-tool"},
		{"host command exits 4", []string{"run", exitCode}, cli.ExitFailed, "sh exited with 4, want 0"},
		{"no power entry", []string{"run", noPower}, cli.ExitInvalid, "nopower.yaml:2:5: power: no power entry for \"dut\""},
		{"power switch fails", []string{"run", failedPower}, cli.ExitInfra, "power on dut: false exited with 1"},
		{"modem lines on a pty", []string{"run", "--sim", ptyLines}, cli.ExitInfra, "has no modem control lines (it is a pty or its driver has none): cannot run reset sequence esp32"},
		{"validate ok", []string{"validate", pass}, cli.ExitPassed, ""},
		{"validate an alias bomb", []string{"validate", aliasBomb}, cli.ExitInvalid, "bomb.yaml:7:17: aliases expand the document by more than 100000 nodes (the alias expansion limit)"},
		{"run an alias bomb", []string{"run", "--sim", aliasBomb}, cli.ExitInvalid, "the alias expansion limit"},
		{"validate a file past the size limit", []string{"validate", bigFile}, cli.ExitInvalid, "big.yaml:1:1: the file is larger than the file size limit of 4 MiB"},
		{"version", []string{"version"}, cli.ExitPassed, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := cli.Main(tt.args, strings.NewReader(""), &out, &errOut)
			if code != tt.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out.String(), errOut.String())
			}
			if !strings.Contains(errOut.String()+out.String(), tt.stderr) {
				t.Errorf("output does not mention %q:\n%s%s", tt.stderr, out.String(), errOut.String())
			}
			if strings.Contains(errOut.String(), "goroutine ") {
				t.Errorf("a panic reached the user:\n%s", errOut.String())
			}
		})
	}
}

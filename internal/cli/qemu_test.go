package cli_test

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/internal/cli"
)

// What --qemu and a probe's QEMU launch get wrong is said before QEMU
// starts: a missing image is invalid input (exit 2), as a missing sequence
// file is; QEMU itself missing is a bench error (exit 3).
func TestQEMUExitCodes(t *testing.T) {
	dir := t.TempDir()
	kernel := writeFile(t, dir, "fw.elf", "\x7fELF")
	seq := writeFile(t, dir, "seq.yaml", "steps:\n  - {send: version, expect: hilrun}\n  - mem_read: 0x20000000\n")
	twoDevices := writeFile(t, dir, "two.yaml", "devices:\n  a:\n  b:\nsteps:\n  - {send: x, to: a}\n  - {send: y, to: b}\n")
	launchGone := writeFile(t, dir, "gone.yaml", "devices:\n  console:\nprobes:\n  fw:\n    launch:\n      qemu: {machine: mps2-an385, kernel: missing.elf, console: console}\nsteps:\n  - {send: version, expect: hilrun}\n")
	launchNoQEMU := writeFile(t, dir, "noqemu.yaml", "devices:\n  console:\nprobes:\n  fw:\n    launch:\n      qemu: {machine: mps2-an385, kernel: fw.elf, console: console, binary: /nonexistent/qemu-system-arm}\nsteps:\n  - {send: version, expect: hilrun}\n")
	for _, tc := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"kernel missing", []string{"--qemu", filepath.Join(dir, "nope.elf"), seq}, 2, "--qemu " + filepath.Join(dir, "nope.elf") + ": " + filepath.Join(dir, "nope.elf") + " does not exist"},
		{"kernel is a folder", []string{"--qemu", dir, seq}, 2, "is a folder, want a file"},
		{"with --sim", []string{"--sim", "--qemu", kernel, seq}, 2, "--sim and --qemu/--qemu-bios each start a virtual board"},
		{"two devices unbound", []string{"--qemu", kernel, twoDevices}, 2, "devices [a b] have no port, and --qemu binds one device"},
		{"qemu not installed", []string{"--qemu", kernel, "--qemu-binary", "/nonexistent/qemu-system-arm", seq}, 3, "/nonexistent/qemu-system-arm is not installed"},
		{"launch kernel missing", []string{launchGone}, 2, "gone.yaml:6:13: probe fw: qemu kernel: " + filepath.Join(dir, "missing.elf") + " does not exist"},
		{"launch qemu not installed", []string{launchNoQEMU}, 3, "noqemu.yaml:6:13: probe fw: start qemu: /nonexistent/qemu-system-arm is not installed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := cli.Main(append([]string{"run"}, tc.args...), strings.NewReader(""), &out, &errOut)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s\n%s", code, tc.code, out.String(), errOut.String())
			}
			if all := out.String() + errOut.String(); !strings.Contains(all, tc.want) {
				t.Errorf("output does not say %q:\n%s", tc.want, all)
			}
		})
	}
}

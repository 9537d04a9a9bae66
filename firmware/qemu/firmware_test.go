// Package qemufw holds hilrun's firmware for QEMU's mps2-an385 machine; its
// test builds it with the real arm-none-eabi toolchain and checks the
// symbols hilrun's sequences use. (pkg/qemu's tests run it.)
package qemufw

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hilrun/hilrun/pkg/testenv"
)

func build(t *testing.T) string {
	t.Helper()
	testenv.NeedTool(t, "make", "apt-get install make")
	testenv.NeedTool(t, "arm-none-eabi-gcc", "apt-get install gcc-arm-none-eabi")
	dir := filepath.Join(t.TempDir(), "build")
	out, err := exec.Command("make", "-s", "check", "BUILD="+dir).CombinedOutput()
	if err != nil {
		t.Fatalf("make check: %v\n%s", err, out)
	}
	if bytes.Contains(out, []byte("warning:")) {
		t.Errorf("the build warns:\n%s", out)
	}
	return filepath.Join(dir, "qemu.elf")
}

// TestSymbols builds the firmware and checks the symbols sequences and
// tests rely on, and the version string in the image.
func TestSymbols(t *testing.T) {
	f, err := elf.Open(build(t))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.Machine != elf.EM_ARM || f.Class != elf.ELFCLASS32 {
		t.Errorf("ELF for %v %v, want 32-bit ARM", f.Class, f.Machine)
	}
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]uint64{
		"counter":      {0x20000000, 4},
		"blink":        {0x20000004, 4},
		"flag":         {0x20000008, 4},
		"flag_at":      {0x2000000c, 4},
		"vector_table": {0x00000000, 256},
	}
	var version elf.Symbol
	for _, s := range syms {
		if s.Name == "fw_version" {
			version = s
		}
		if w, ok := want[s.Name]; ok {
			if s.Value != w[0] || s.Size != w[1] {
				t.Errorf("%s at 0x%08x size %d, want 0x%08x size %d", s.Name, s.Value, s.Size, w[0], w[1])
			}
			delete(want, s.Name)
		}
	}
	for name := range want {
		t.Errorf("symbol %s is missing", name)
	}
	sec := f.Sections[version.Section]
	data, err := sec.Data()
	if err != nil {
		t.Fatal(err)
	}
	off := version.Value - sec.Addr
	if got := string(data[off : off+version.Size]); got != "hilrun-qemu 1.0.0\x00" {
		t.Errorf("fw_version is %q", got)
	}
}

// TestReproducible: two builds in different directories give the same
// bytes, so the ELF a sequence names matches the one a test built.
func TestReproducible(t *testing.T) {
	a, err := os.ReadFile(build(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(build(t))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("two builds differ")
	}
}

// Package sim holds the firmware of hilrun's virtual board; its test
// rebuilds it with the real arm-none-eabi toolchain and checks the ELF that
// hilrun's tests use.
package sim

import (
	"bytes"
	"debug/elf"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hilrun/hilrun/pkg/testenv"
)

func needTool(t *testing.T, name string) {
	t.Helper()
	testenv.NeedTool(t, name, "apt-get install gcc-arm-none-eabi")
}

// TestCheckedInELF checks the symbols hilrun's memory tests rely on.
func TestCheckedInELF(t *testing.T) {
	f, err := elf.Open("sim.elf")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]uint64{
		"counter":     {0x20000000, 4},
		"blink":       {0x20000004, 4},
		"status_word": {0x2000000c, 2},
		"led_pattern": {0x20000028, 8},
		"config":      {0x20000018, 16},
	}
	for _, s := range syms {
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
}

// TestRebuild builds the firmware from source with the real toolchain into
// a temporary folder, checks its symbols with make check, and compares the
// result with the checked-in ELF.
func TestRebuild(t *testing.T) {
	needTool(t, "arm-none-eabi-gcc")
	needTool(t, "make")
	build := filepath.Join(t.TempDir(), "build")
	cmd := exec.Command("make", "-s", "check", "BUILD="+build)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("make check: %v\n%s", err, out)
	}
	fresh, err := os.ReadFile(filepath.Join(build, "sim.elf"))
	if err != nil {
		t.Fatal(err)
	}
	shipped, err := os.ReadFile("sim.elf")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(fresh, shipped) {
		ver, _ := exec.Command("arm-none-eabi-gcc", "--version").Output()
		// Another compiler release lays the code out differently; the
		// symbol checks above still hold.
		t.Logf("a fresh build differs from the checked-in sim.elf (toolchain: %s); run make -C firmware/sim update with Debian 12's gcc-arm-none-eabi to refresh it", bytes.SplitN(ver, []byte("\n"), 2)[0])
		if bytes.Contains(ver, []byte("12.2.1")) {
			t.Errorf("with the toolchain the checked-in ELF was built with, the build must be byte-identical")
		}
	}
}

// TestBrokenVariantsFail checks that the broken sources fail to build, with
// the compiler and linker messages the build-failure classifier relies on.
func TestBrokenVariantsFail(t *testing.T) {
	needTool(t, "arm-none-eabi-gcc")
	needTool(t, "make")
	for target, msg := range map[string]string{
		"broken-missing-header": "fatal error: hilrun_missing.h: No such file or directory",
		"broken-undefined":      "undefined reference to `hilrun_undefined_function'",
		"broken-overflow":       "region `RAM' overflowed by",
	} {
		t.Run(target, func(t *testing.T) {
			cmd := exec.Command("make", "-s", target, "BUILD="+filepath.Join(t.TempDir(), "build"))
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Fatalf("make %s succeeded", target)
			}
			if !bytes.Contains(out, []byte(msg)) {
				t.Errorf("make %s output lacks %q:\n%s", target, msg, out)
			}
		})
	}
}

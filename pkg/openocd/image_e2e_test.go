package openocd

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/elfsym"
	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// firmwareELF is the virtual board's firmware image, built by
// firmware/sim.
const firmwareELF = "../../firmware/sim/sim.elf"

// needFirmware skips the test when firmware/sim/sim.elf is absent, or
// fails it under CI=true, where it is checked in.
func needFirmware(t testing.TB) { testenv.SimFirmware(t, 2) }

// TestE2EFirmwareImage loads the firmware into the virtual board and
// checks it, by symbol.
func TestE2EFirmwareImage(t *testing.T) {
	t.Parallel()
	needFirmware(t)
	eachTransport(t, func(t *testing.T, tr Transport) {
		b := startBoard(t)
		s := b.dialOver(t, tr)
		ctx := testCtx(t)
		path, err := filepath.Abs(firmwareELF)
		must(t, err)
		out, err := s.LoadImage(ctx, path, 0)
		must(t, err)
		t.Logf("load_image: %s", out)
		must(t, s.VerifyImage(ctx, path, 0))

		syms, err := elfsym.LoadSymbols(files.Anywhere(), firmwareELF)
		must(t, err)
		v, err := syms.Lookup("fw_version")
		must(t, err)
		got, err := s.ReadMemory(ctx, v.Addr, 8, int(v.Size))
		must(t, err)
		var str []byte
		for _, c := range got {
			if c == 0 {
				break
			}
			str = append(str, byte(c))
		}
		if !strings.HasPrefix(string(str), "sim") && len(str) == 0 {
			t.Errorf("fw_version reads %q", str)
		}
		t.Logf("fw_version = %q", str)

		main, err := syms.Lookup("main")
		must(t, err)
		must(t, b.mem.Write(uint32(main.Addr), 16, 0xbf00)) // a NOP over main's first instruction
		err = s.VerifyImage(ctx, path, 0)
		var ce *CommandError
		if !errors.As(err, &ce) || !strings.Contains(ce.Output, "diff 0 address 0x08000160.") {
			t.Errorf("after patching main: got %v, want a difference at main", err)
		}
		t.Logf("verify after the patch: %v", err)
	})
}

package openocd

import (
	"debug/elf"
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/internal/testenv"
)

// A position-independent file's symbols are offsets, not addresses: a
// lookup says so instead of handing out an address that reads elsewhere.
// A file linked at a fixed address keeps its symbols, whatever its type.
func TestPositionIndependentSymbols(t *testing.T) {
	cc := testenv.NeedTool(t, "cc", "apt-get install gcc")
	dir := t.TempDir()
	src := filepath.Join(dir, "counter.c")
	must(t, os.WriteFile(src, []byte("volatile unsigned long counter;\nint main(void) { for (;;) counter++; }\n"), 0o644))
	lib := filepath.Join(dir, "lib.c")
	must(t, os.WriteFile(lib, []byte("unsigned long counter;\n"), 0o644))
	hand := filepath.Join(dir, "hand.so")
	b := buildELF(t, []testSym{{name: "counter", value: 0x100, size: 4, info: globalObject}})
	binary.LittleEndian.PutUint16(b[16:], uint16(elf.ET_DYN))
	must(t, os.WriteFile(hand, b, 0o644))
	for _, tc := range []struct {
		name, file string
		cc         []string // how cc builds file, if it does
		pie        bool
	}{
		{name: "PIE", file: "pie", cc: []string{"-pie", "-fPIE", src}, pie: true},
		{name: "no PIE", file: "nopie", cc: []string{"-no-pie", "-fno-pie", src}},
		{name: "shared object linked at 0", file: "lib.so", cc: []string{"-shared", "-fPIC", lib}, pie: true},
		{name: "shared object linked at a fixed address", file: "based.so", cc: []string{"-shared", "-fPIC", "-Wl,-Ttext-segment=0x10000000", lib}},
		{name: "ET_DYN without program headers", file: "hand.so", pie: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			if tc.cc != nil {
				if out, err := exec.Command(cc, append([]string{"-o", path}, tc.cc...)...).CombinedOutput(); err != nil {
					t.Fatalf("cc: %v\n%s", err, out)
				}
			}
			addr, _, err := LookupSymbol(path, "counter")
			if !tc.pie {
				if err != nil || addr == 0 {
					t.Fatalf("got 0x%x, %v", addr, err)
				}
				return
			}
			want := "symbol counter: " + path + " is position-independent (ELF type ET_DYN, linked at 0): its symbols are offsets from wherever the program is loaded when it runs, not addresses; build it with -no-pie"
			if err == nil || !strings.HasPrefix(err.Error(), want) {
				t.Errorf("got 0x%x, %v\nwant an error starting %s", addr, err, want)
			}
		})
	}
}

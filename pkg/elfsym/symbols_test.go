package elfsym

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/runner"

	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// firmwareELF is the virtual board's firmware image, built by
// firmware/sim.
const firmwareELF = "../../firmware/sim/sim.elf"

// needFirmware skips the test when firmware/sim/sim.elf is absent, or
// fails it under CI=true, where it is checked in.
func needFirmware(t testing.TB) { testenv.SimFirmware(t, 2) }

func TestFirmwareSymbols(t *testing.T) {
	needFirmware(t)
	syms, err := LoadSymbols(files.Anywhere(), firmwareELF)
	must(t, err)
	tests := []struct {
		name    string
		want    Symbol
		wantErr string
	}{
		{name: "counter", want: Symbol{Name: "counter", Addr: uint64(sim.CounterAddr), Size: 4}},
		{name: "blink", want: Symbol{Name: "blink", Addr: uint64(sim.BlinkAddr), Size: 4}},
		{name: "config", want: Symbol{Name: "config", Addr: 0x20000018, Size: 16}},
		{name: "ticks", want: Symbol{Name: "ticks", Addr: 0x20000008, Size: 4}}, // file-local
		{name: "main", want: Symbol{Name: "main", Addr: 0x08000160, Size: 0xa8, Func: true}},
		{name: "Reset_Handler", want: Symbol{Name: "Reset_Handler", Addr: 0x08000100, Size: 0x40, Func: true}},
		{name: "countr", wantErr: "symbol countr not found in ../../firmware/sim/sim.elf (did you mean counter?)"},
		{name: "BLINK", wantErr: "symbol BLINK not found in ../../firmware/sim/sim.elf (did you mean blink?)"},
		{name: "xyzzy", wantErr: "symbol xyzzy not found in ../../firmware/sim/sim.elf"},
		{name: "_sdata", wantErr: "symbol _sdata in ../../firmware/sim/sim.elf is neither a data object nor a function (it is a linker symbol, at 0x20000018)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := syms.Lookup(tt.name)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got %+v, %v, want error %q", got, err, tt.wantErr)
				}
				return
			}
			must(t, err)
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	addr, size, err := Lookup(files.Anywhere())(firmwareELF, "blink")
	if err != nil || addr != uint64(sim.BlinkAddr) || size != 4 {
		t.Errorf("LookupSymbol: got 0x%x, %d, %v", addr, size, err)
	}
}

func TestSymbolCache(t *testing.T) {
	needFirmware(t)
	b, err := os.ReadFile(firmwareELF)
	must(t, err)
	path := filepath.Join(t.TempDir(), "fw.elf")
	must(t, os.WriteFile(path, b, 0o644))
	a1, err := LoadSymbols(files.Anywhere(), path)
	must(t, err)
	a2, err := LoadSymbols(files.Anywhere(), path)
	must(t, err)
	if a1 != a2 {
		t.Error("loading an unchanged file again read it again")
	}
	// A rebuilt file is read again.
	must(t, os.WriteFile(path, buildELF(t, []testSym{{name: "rebuilt", value: 0x20000000, size: 4, info: globalObject}}), 0o644))
	later := time.Now().Add(time.Second)
	must(t, os.Chtimes(path, later, later))
	a3, err := LoadSymbols(files.Anywhere(), path)
	must(t, err)
	if _, err := a3.Lookup("rebuilt"); err != nil {
		t.Errorf("after the rebuild: %v", err)
	}
}

const (
	globalObject = byte(elf.STB_GLOBAL)<<4 | byte(elf.STT_OBJECT)
	localObject  = byte(elf.STB_LOCAL)<<4 | byte(elf.STT_OBJECT)
	globalFunc   = byte(elf.STB_GLOBAL)<<4 | byte(elf.STT_FUNC)
	weakFunc     = byte(elf.STB_WEAK)<<4 | byte(elf.STT_FUNC)
	globalNoType = byte(elf.STB_GLOBAL)<<4 | byte(elf.STT_NOTYPE)
)

type testSym struct {
	name        string
	value, size uint32
	info        byte
	undefined   bool
}

func TestSymbolsOfAHandmadeELF(t *testing.T) {
	path := filepath.Join(t.TempDir(), "hand.elf")
	must(t, os.WriteFile(path, buildELF(t, []testSym{
		{name: "state", value: 0x20000100, size: 4, info: localObject},  // in a.c
		{name: "state", value: 0x20000200, size: 4, info: localObject},  // in b.c
		{name: "shared", value: 0x20000300, size: 8, info: localObject}, // hidden by the global
		{name: "shared", value: 0x20000400, size: 8, info: globalObject},
		{name: "isr", value: 0x08000201, size: 12, info: weakFunc},
		{name: "main", value: 0x08000301, size: 40, info: globalFunc},
		{name: "_end", value: 0x20001000, info: globalNoType},
		{name: "printf", info: globalFunc, undefined: true},
	}), 0o644))
	syms, err := LoadSymbols(files.Anywhere(), path)
	must(t, err)
	tests := []struct {
		name    string
		want    Symbol
		wantErr string
	}{
		{name: "shared", want: Symbol{Name: "shared", Addr: 0x20000400, Size: 8}},
		{name: "isr", want: Symbol{Name: "isr", Addr: 0x08000200, Size: 12, Func: true}},
		{name: "main", want: Symbol{Name: "main", Addr: 0x08000300, Size: 40, Func: true}},
		{name: "state", wantErr: "symbol state is ambiguous in " + path + ": 2 file-local symbols have that name, at 0x20000100, 0x20000200"},
		{name: "_end", wantErr: "symbol _end in " + path + " is neither a data object nor a function (it is a linker symbol, at 0x20001000)"},
		{name: "printf", wantErr: "symbol printf not found in " + path},
		{name: "mian", wantErr: "symbol mian not found in " + path + " (did you mean main?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := syms.Lookup(tt.name)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got %+v, %v, want error %q", got, err, tt.wantErr)
				}
				return
			}
			must(t, err)
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
		})
	}
	if got := strings.Join(syms.Names(), " "); got != "isr main shared state" {
		t.Errorf("Names() = %s", got)
	}
}

func TestLoadSymbolsErrors(t *testing.T) {
	dir := t.TempDir()
	notELF := filepath.Join(dir, "firmware.hex")
	must(t, os.WriteFile(notELF, []byte(":020000040800F2\n"), 0o644))
	stripped := filepath.Join(dir, "stripped.elf")
	must(t, os.WriteFile(stripped, buildELF(t, nil), 0o644))
	tests := []struct {
		name, path, wantErr string
		is                  error
	}{
		{"missing", filepath.Join(dir, "missing.elf"), "load symbols: open " + filepath.Join(dir, "missing.elf") + ": no such file or directory", os.ErrNotExist},
		{"not ELF", notELF, "load symbols from " + notELF + ": not an ELF file: bad magic number", nil},
		{"stripped", stripped, "load symbols from " + stripped + ": the file has no symbol table (stripped?)", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadSymbols(files.Anywhere(), tt.path)
			if s != nil || err == nil || !strings.HasPrefix(err.Error(), tt.wantErr) {
				t.Fatalf("got %v, %v, want an error starting %q", s, err, tt.wantErr)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("the error does not wrap %v", tt.is)
			}
		})
	}
}

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
			addr, _, err := Lookup(files.Anywhere())(path, "counter")
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

// buildELF returns a little-endian ELF32 ARM file with the symbols in a
// .symtab (none at all when syms is nil), to test what the firmware image
// does not have.
func buildELF(t testing.TB, syms []testSym) []byte {
	t.Helper()
	le := binary.LittleEndian
	shstr := []byte("\x00.symtab\x00.strtab\x00.shstrtab\x00.data\x00")
	const (
		nSymtab   = 1
		nStrtab   = 9
		nShstrtab = 17
		nData     = 27
	)
	str := []byte{0}
	symtab := make([]byte, 16) // the null symbol
	for _, s := range syms {
		var e [16]byte
		le.PutUint32(e[0:], uint32(len(str)))
		le.PutUint32(e[4:], s.value)
		le.PutUint32(e[8:], s.size)
		e[12] = s.info
		shndx := uint16(4) // .data
		if s.undefined {
			shndx = uint16(elf.SHN_UNDEF)
		}
		le.PutUint16(e[14:], shndx)
		str = append(append(str, s.name...), 0)
		symtab = append(symtab, e[:]...)
	}

	var body bytes.Buffer
	body.Write(make([]byte, 52)) // the header, filled in below
	type sec struct {
		name, typ, link, info, entsize uint32
		data                           []byte
		off                            uint32
	}
	secs := []sec{{}}
	if syms != nil {
		secs = append(secs,
			sec{name: nSymtab, typ: uint32(elf.SHT_SYMTAB), link: 2, info: 1, entsize: 16, data: symtab},
			sec{name: nStrtab, typ: uint32(elf.SHT_STRTAB), data: str})
	} else {
		secs = append(secs, sec{name: nData, typ: uint32(elf.SHT_PROGBITS), data: []byte{0}}, sec{name: nData, typ: uint32(elf.SHT_PROGBITS), data: []byte{0}})
	}
	secs = append(secs,
		sec{name: nShstrtab, typ: uint32(elf.SHT_STRTAB), data: shstr},
		sec{name: nData, typ: uint32(elf.SHT_PROGBITS), data: make([]byte, 4)})
	for i := range secs {
		if i == 0 {
			continue
		}
		for body.Len()%4 != 0 {
			body.WriteByte(0)
		}
		secs[i].off = uint32(body.Len())
		body.Write(secs[i].data)
	}
	for body.Len()%4 != 0 {
		body.WriteByte(0)
	}
	shoff := uint32(body.Len())
	for _, s := range secs {
		var h [40]byte
		le.PutUint32(h[0:], s.name)
		le.PutUint32(h[4:], s.typ)
		le.PutUint32(h[16:], s.off)
		le.PutUint32(h[20:], uint32(len(s.data)))
		le.PutUint32(h[24:], s.link)
		le.PutUint32(h[28:], s.info)
		le.PutUint32(h[32:], 1)
		le.PutUint32(h[36:], s.entsize)
		body.Write(h[:])
	}
	b := body.Bytes()
	copy(b, elf.ELFMAG)
	b[elf.EI_CLASS] = byte(elf.ELFCLASS32)
	b[elf.EI_DATA] = byte(elf.ELFDATA2LSB)
	b[elf.EI_VERSION] = byte(elf.EV_CURRENT)
	le.PutUint16(b[16:], uint16(elf.ET_EXEC))
	le.PutUint16(b[18:], uint16(elf.EM_ARM))
	le.PutUint32(b[20:], uint32(elf.EV_CURRENT))
	le.PutUint32(b[32:], shoff)
	le.PutUint16(b[40:], 52)
	le.PutUint16(b[46:], 40)
	le.PutUint16(b[48:], uint16(len(secs)))
	le.PutUint16(b[50:], 3) // .shstrtab
	return b
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Lookup is the runner's view of symbol lookup.
var _ runner.SymbolLookup = Lookup(files.Anywhere())

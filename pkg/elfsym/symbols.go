// Package elfsym reads the symbols of an ELF file (data objects and
// functions, by name) for steps that address memory by name. It belongs
// to no probe: OpenOCD, GDB stubs and the REPL all read symbols through it.
package elfsym

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/suggest"
)

// Symbol is a data object or a function of an ELF file.
type Symbol struct {
	Name string
	// Addr is the symbol's address. For an ARM Thumb function it is the
	// address of the code, without the Thumb bit the symbol table sets.
	Addr uint64
	// Size is the symbol's size in bytes, 0 when the file does not say.
	Size uint64
	// Func is set for a function, clear for a data object.
	Func bool
}

// Symbols are the data objects and functions of an ELF file, by name.
type Symbols struct {
	path   string
	byKey  map[string][]Symbol // several for a name only when no one is global
	names  []string            // sorted, for suggestions
	others map[string]uint64   // other defined symbols (linker symbols): address
	pie    bool                // position-independent: see positionIndependent
}

// symbolCache holds the symbols of the files loaded so far, so that a run
// that looks up many symbols reads each file once. A file that changes
// (a rebuilt firmware) is read again.
var symbolCache = struct {
	sync.Mutex
	m map[string]cachedSymbols
}{m: map[string]cachedSymbols{}}

type cachedSymbols struct {
	mtime time.Time
	size  int64
	syms  *Symbols
}

// LoadSymbols reads the symbol table of the ELF file at path, opened
// through fs. Results are cached by path, modification time and size.
func LoadSymbols(fs files.Policy, path string) (*Symbols, error) {
	file, err := fs.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load symbols: %w", err)
	}
	defer file.Close()
	fi, err := file.Stat()
	if err != nil {
		return nil, fmt.Errorf("load symbols: %w", err)
	}
	symbolCache.Lock()
	c, ok := symbolCache.m[path]
	symbolCache.Unlock()
	if ok && c.mtime.Equal(fi.ModTime()) && c.size == fi.Size() {
		return c.syms, nil
	}
	syms, err := readSymbols(file, path)
	if err != nil {
		return nil, err
	}
	symbolCache.Lock()
	symbolCache.m[path] = cachedSymbols{mtime: fi.ModTime(), size: fi.Size(), syms: syms}
	symbolCache.Unlock()
	return syms, nil
}

// Lookup is the runner's symbol lookup over ELF files opened through fs:
// the address and size in bytes of the symbol name in the file at path,
// LoadSymbols and Symbols.Lookup in one call.
func Lookup(fs files.Policy) func(path, name string) (addr, size uint64, err error) {
	return func(path, name string) (uint64, uint64, error) {
		syms, err := LoadSymbols(fs, path)
		if err != nil {
			return 0, 0, err
		}
		s, err := syms.Lookup(name)
		if err != nil {
			return 0, 0, err
		}
		return s.Addr, s.Size, nil
	}
}

func readSymbols(r io.ReaderAt, path string) (*Symbols, error) {
	f, err := elf.NewFile(r)
	if err != nil {
		var fe *elf.FormatError
		if errors.As(err, &fe) {
			return nil, fmt.Errorf("load symbols from %s: not an ELF file: %w", path, err)
		}
		return nil, fmt.Errorf("load symbols: %w", err)
	}
	defer f.Close()
	list, err := f.Symbols()
	if errors.Is(err, elf.ErrNoSymbols) {
		return nil, fmt.Errorf("load symbols from %s: the file has no symbol table (stripped?)", path)
	}
	if err != nil {
		return nil, fmt.Errorf("load symbols from %s: %w", path, err)
	}
	s := &Symbols{path: path, byKey: map[string][]Symbol{}, others: map[string]uint64{}, pie: positionIndependent(f)}
	global := map[string]bool{}
	for _, es := range list {
		typ := elf.ST_TYPE(es.Info)
		if es.Name == "" || es.Section == elf.SHN_UNDEF {
			continue
		}
		if typ != elf.STT_OBJECT && typ != elf.STT_FUNC {
			if typ == elf.STT_NOTYPE {
				s.others[es.Name] = es.Value
			}
			continue
		}
		sym := Symbol{Name: es.Name, Addr: es.Value, Size: es.Size, Func: typ == elf.STT_FUNC}
		if sym.Func && f.Machine == elf.EM_ARM {
			sym.Addr &^= 1
		}
		isGlobal := elf.ST_BIND(es.Info) != elf.STB_LOCAL
		switch {
		case global[es.Name]:
			// A global symbol hides file-local ones of the same name.
		case isGlobal:
			global[es.Name] = true
			s.byKey[es.Name] = []Symbol{sym}
		default:
			s.byKey[es.Name] = append(s.byKey[es.Name], sym)
		}
	}
	for n := range s.byKey {
		s.names = append(s.names, n)
	}
	sort.Strings(s.names)
	return s, nil
}

// positionIndependent reports whether f is loaded at an address chosen
// when it runs (a PIE, or a shared library): an ET_DYN file linked at 0,
// whose symbol values are offsets from wherever it lands. An ET_DYN file
// linked elsewhere (U-Boot's ELF on ARM) runs where it was linked, at
// least until it relocates itself, so its symbols are addresses.
func positionIndependent(f *elf.File) bool {
	if f.Type != elf.ET_DYN {
		return false
	}
	for _, p := range f.Progs {
		if p.Type == elf.PT_LOAD && p.Vaddr == 0 {
			return true
		}
	}
	// The first loadable segment of a file linked at 0 starts at 0.
	return !slices.ContainsFunc(f.Progs, func(p *elf.Prog) bool { return p.Type == elf.PT_LOAD })
}

// Lookup returns the symbol called name. An unknown name's error suggests
// the nearest known one:
//
//	symbol countr not found in firmware/sim/sim.elf (did you mean counter?)
//
// A position-independent file's symbols are refused, since they are not
// addresses: reading at one reads elsewhere, or fails as a refused
// address that says nothing of why.
func (s *Symbols) Lookup(name string) (Symbol, error) {
	if s.pie {
		return Symbol{}, fmt.Errorf("symbol %s: %s is position-independent (ELF type ET_DYN, linked at 0): its symbols are offsets from wherever the program is loaded when it runs, not addresses; build it with -no-pie (gcc and clang), or give the address instead of the symbol", name, s.path)
	}
	list := s.byKey[name]
	switch len(list) {
	case 0:
		if addr, ok := s.others[name]; ok {
			return Symbol{}, fmt.Errorf("symbol %s in %s is neither a data object nor a function (it is a linker symbol, at 0x%x)", name, s.path, addr)
		}
		msg := fmt.Sprintf("symbol %s not found in %s", name, s.path)
		if m := s.suggest(name); m != "" {
			msg += " (did you mean " + m + "?)"
		}
		return Symbol{}, errors.New(msg)
	case 1:
		return list[0], nil
	}
	addrs := make([]string, len(list))
	for i, sym := range list {
		addrs[i] = fmt.Sprintf("0x%x", sym.Addr)
	}
	return Symbol{}, fmt.Errorf("symbol %s is ambiguous in %s: %d file-local symbols have that name, at %s",
		name, s.path, len(list), strings.Join(addrs, ", "))
}

// Names returns the names of the symbols, sorted.
func (s *Symbols) Names() []string {
	return append([]string(nil), s.names...)
}

// suggest returns the known name nearest to name, or "" when none is
// near enough to be a likely typo.
func (s *Symbols) suggest(name string) string {
	best, d := suggest.Nearest(name, s.names)
	if d < 0 || d > max(2, len(name)/3) {
		return ""
	}
	return best
}

package openocd

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeMemory is a handler for fakeOpenOCD that keeps a sparse byte-wise
// memory and answers read_memory and write_memory, or, with old, only the
// md and mw commands of OpenOCD releases before 0.12 (lacking, a format
// for the command's name, says how the missing commands fail).
type fakeMemory struct {
	mu      sync.Mutex
	mem     map[uint64]byte
	old     bool
	lacking string
}

var (
	fakeReadMemory  = regexp.MustCompile(`^read_memory 0x([0-9a-f]+) (8|16|32|64) ([0-9]+)$`)
	fakeWriteMemory = regexp.MustCompile(`^write_memory 0x([0-9a-f]+) (8|16|32|64) \{([0-9a-fx ]*)\}$`)
	fakeMD          = regexp.MustCompile(`^md([bhwd]) 0x([0-9a-f]+) ([0-9]+)$`)
	fakeMW          = regexp.MustCompile(`^mw([bhwd]) 0x([0-9a-f]+) 0x([0-9a-f]+)$`)
)

func (m *fakeMemory) get(addr uint64, width int) uint64 {
	var v uint64
	for i := width/8 - 1; i >= 0; i-- {
		v = v<<8 | uint64(m.mem[addr+uint64(i)])
	}
	return v
}

func (m *fakeMemory) set(addr uint64, width int, v uint64) {
	for i := range width / 8 {
		m.mem[addr+uint64(i)] = byte(v >> (8 * i))
	}
}

func letterWidth(l string) int {
	return map[string]int{"b": 8, "h": 16, "w": 32, "d": 64}[l]
}

func (m *fakeMemory) handle(cmd string) fakeAnswer {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.mem == nil {
		m.mem = map[uint64]byte{}
	}
	hex := func(s string) uint64 { v, _ := strconv.ParseUint(s, 16, 64); return v }
	if x := fakeReadMemory.FindStringSubmatch(cmd); x != nil {
		if m.old {
			return fakeAnswer{code: 1, out: fmt.Sprintf(m.lacking, "read_memory")}
		}
		addr, width := hex(x[1]), atoi(x[2])
		n := atoi(x[3])
		vals := make([]string, n)
		for i := range vals {
			vals[i] = fmt.Sprintf("0x%x", m.get(addr+uint64(i*width/8), width))
		}
		return fakeAnswer{out: strings.Join(vals, " ")}
	}
	if x := fakeWriteMemory.FindStringSubmatch(cmd); x != nil {
		if m.old {
			return fakeAnswer{code: 1, out: fmt.Sprintf(m.lacking, "write_memory")}
		}
		addr, width := hex(x[1]), atoi(x[2])
		for i, f := range strings.Fields(x[3]) {
			v, _ := strconv.ParseUint(f, 0, 64)
			m.set(addr+uint64(i*width/8), width, v)
		}
		return fakeAnswer{}
	}
	if x := fakeMD.FindStringSubmatch(cmd); x != nil {
		width, addr, n := letterWidth(x[1]), hex(x[2]), atoi(x[3])
		var b strings.Builder
		perLine := 32 / (width / 8)
		for i := range n {
			if i%perLine == 0 {
				if i > 0 {
					b.WriteString("\n")
				}
				fmt.Fprintf(&b, "0x%08x: ", addr+uint64(i*width/8))
			}
			fmt.Fprintf(&b, "%0*x ", width/4, m.get(addr+uint64(i*width/8), width))
		}
		b.WriteString("\n")
		return fakeAnswer{out: b.String()}
	}
	answer := fakeAnswer{}
	for _, c := range strings.Split(cmd, "; ") {
		x := fakeMW.FindStringSubmatch(c)
		if x == nil {
			return fakeAnswer{code: 1, out: fmt.Sprintf("invalid command name %q", strings.Fields(c)[0])}
		}
		m.set(hex(x[2]), letterWidth(x[1]), hex(x[3]))
	}
	return answer
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

func TestMemoryCommands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		mem  *fakeMemory
		// want are the first words of the commands that reach the server.
		want []string
	}{
		{name: "read_memory", mem: &fakeMemory{}, want: []string{"write_memory", "read_memory"}},
		{name: "an OpenOCD without read_memory", mem: &fakeMemory{old: true, lacking: `invalid command name "%s"`},
			want: []string{"write_memory", "mww", "read_memory", "mdw"}},
		{name: "a target without read_memory", mem: &fakeMemory{old: true, lacking: "Target sim.mem doesn't support %s"},
			want: []string{"write_memory", "mww", "read_memory", "mdw"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			eachTransport(t, func(t *testing.T, tr Transport) {
				mem := &fakeMemory{old: tt.mem.old, lacking: tt.mem.lacking}
				f := newFake(t, tr, mem.handle)
				s := dialFake(t, f)
				ctx := testCtx(t)
				must(t, s.WriteMemory(ctx, 0x1000, 32, []uint64{0x11223344}))
				checkValues(t, s, 0x1000, 32, []uint64{0x11223344})
				var first []string
				for _, c := range f.received() {
					if w := strings.Fields(c)[0]; len(first) == 0 || first[len(first)-1] != w {
						first = append(first, w)
					}
				}
				if fmt.Sprint(first) != fmt.Sprint(tt.want) {
					t.Errorf("commands %q, want %q", first, tt.want)
				}
				for _, width := range []int{8, 16, 32, 64} {
					vals := sequence(700, 0x9e3779b97f4a7c15)
					for i := range vals {
						if width < 64 {
							vals[i] &= 1<<width - 1
						}
					}
					addr := uint64(0x100000 * width)
					must(t, s.WriteMemory(ctx, addr, width, vals))
					checkValues(t, s, addr, width, vals)
				}
			})
		})
	}
}

func TestLargeAccessesTakeSeveralCommands(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		var mem fakeMemory
		f := newFake(t, tr, mem.handle)
		s := dialFake(t, f)
		ctx := testCtx(t)
		vals := sequence(3000, 3)
		for i := range vals {
			vals[i] &= 0xff
		}
		must(t, s.WriteMemory(ctx, 0x20000000, 8, vals))
		got, err := s.ReadMemory(ctx, 0x20000000, 8, 70000)
		must(t, err)
		for i, v := range got {
			want := uint64(0)
			if i < len(vals) {
				want = vals[i]
			}
			if v != want {
				t.Fatalf("byte %d: got 0x%x, want 0x%x", i, v, want)
			}
		}
		var reads, writes []string
		for _, c := range f.received() {
			switch {
			case strings.HasPrefix(c, "read_memory"):
				reads = append(reads, c)
			case strings.HasPrefix(c, "write_memory"):
				writes = append(writes, c)
			}
		}
		if want := []string{"read_memory 0x20000000 8 65536", "read_memory 0x20010000 8 4464"}; fmt.Sprint(reads) != fmt.Sprint(want) {
			t.Errorf("reads %q, want %q", reads, want)
		}
		switch {
		case tr == Telnet && len(writes) < 2:
			t.Errorf("3000 values went in %d write_memory commands; one telnet line cannot hold them", len(writes))
		case tr == TclRPC && len(writes) != 1:
			t.Errorf("3000 values went in %d write_memory commands; one Tcl RPC request holds them", len(writes))
		}
	})
}

func TestMemoryArguments(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		f := newFake(t, tr, (&fakeMemory{}).handle)
		s := dialFake(t, f)
		ctx := testCtx(t)
		tests := []struct {
			name    string
			call    func() error
			wantErr string
		}{
			{"read width", func() error { _, err := s.ReadMemory(ctx, 0x1000, 12, 1); return err },
				"read memory at 0x1000: width 12: must be 8, 16, 32 or 64 bits"},
			{"read count", func() error { _, err := s.ReadMemory(ctx, 0x1000, 32, 0); return err },
				"read memory at 0x1000: count 0: must be at least 1"},
			{"read past the end", func() error { _, err := s.ReadMemory(ctx, 0xfffffffffffffffc, 32, 2); return err },
				"read memory at 0xfffffffffffffffc: 2 values of 32 bits run past the end of the address space"},
			{"write nothing", func() error { return s.WriteMemory(ctx, 0x1000, 32, nil) },
				"write memory at 0x1000: count 0: must be at least 1"},
			{"write too wide a value", func() error { return s.WriteMemory(ctx, 0x1000, 16, []uint64{1, 0x10000}) },
				"write memory at 0x1002: value 1 (0x10000) does not fit in 16 bits"},
			{"reset mode", func() error { return s.Reset(ctx, "soft") },
				`reset: mode "soft": must be run, halt or init`},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				err := tt.call()
				if err == nil || err.Error() != tt.wantErr {
					t.Errorf("got %v, want %q", err, tt.wantErr)
				}
				var ce *CommandError
				if errors.As(err, &ce) || errors.Is(err, ErrUnavailable) {
					t.Errorf("invalid arguments are neither a CommandError nor ErrUnavailable")
				}
			})
		}
		if got := f.received(); len(got) != 0 {
			t.Errorf("the server received %q", got)
		}
	})
}

func TestParseMD(t *testing.T) {
	tests := []struct {
		name, out string
		width     int
		count     int
		want      []uint64
		wantErr   string
	}{
		{name: "mdw", out: "0x20000000: 000035e4 00000000 \n", width: 32, count: 2, want: []uint64{0x35e4, 0}},
		{name: "mdb over two lines", out: "0x08000000: 00 00 01 20 \n0x08000004: ff \n", width: 8, count: 5, want: []uint64{0, 0, 1, 0x20, 0xff}},
		{name: "mdd", out: "0x08000000: 0800010120010000 \n", width: 64, count: 1, want: []uint64{0x0800010120010000}},
		{name: "too few", out: "0x0: 00000001 \n", width: 32, count: 2, wantErr: "asked for 2 values, got 1"},
		{name: "wrong width", out: "0x0: 0001 \n", width: 32, count: 1, wantErr: `"0001" is not a 32-bit value in line "0x0: 0001"`},
		{name: "no address", out: "something else\n", width: 32, count: 1, wantErr: `unexpected line "something else"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMD(tt.out, tt.width, tt.count)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("got %v, want error %q", err, tt.wantErr)
				}
				return
			}
			must(t, err)
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %#x, want %#x", got, tt.want)
			}
		})
	}
}

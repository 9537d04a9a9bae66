package openocd

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/dial"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/sim/jtag"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// needOpenOCD returns the path of the openocd binary. Without one the test
// is skipped, or fails under CI=true, where scripts/test installs it.
func needOpenOCD(t testing.TB) string {
	t.Helper()
	return testenv.NeedTool(t, "openocd", "apt-get install openocd")
}

// board is the virtual board's memory behind its JTAG port, and an OpenOCD
// driving it.
type board struct {
	mem  *sim.Memory
	jtag *jtag.Server
	proc *Process
	cfg  LaunchConfig
}

// startBoard starts a virtual board and an OpenOCD attached to it; both
// end with the test.
func startBoard(t testing.TB) *board {
	t.Helper()
	bin := needOpenOCD(t)
	b := &board{mem: sim.NewMemory()}
	srv, err := jtag.Serve(context.Background(), b.mem, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	b.jtag = srv
	cfgPath := filepath.Join(t.TempDir(), "board.cfg")
	if err := os.WriteFile(cfgPath, []byte(jtag.OpenOCDConfig(srv.Addr())), 0o644); err != nil {
		t.Fatal(err)
	}
	b.cfg = LaunchConfig{Procs: hostProcs, Dial: dial.Anywhere(),
		Binary:    bin,
		Configs:   []string{cfgPath},
		StopGrace: 2 * time.Second,
		Env:       []string{"HOME=" + filepath.Dir(cfgPath)}, // for .openocd_history
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := Launch(ctx, b.cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	b.proc = p
	return b
}

// dial opens a session with the board's OpenOCD that ends with the test,
// over the transport the process chose.
func (b *board) dial(t testing.TB, opts ...Option) *Session {
	t.Helper()
	return b.dialOver(t, b.proc.Transport(), opts...)
}

// addr is the address of the board's OpenOCD server tr, as Dial reads it.
func (b *board) addr(t testing.TB, tr Transport) string {
	t.Helper()
	if tr == Telnet {
		return b.proc.TelnetAddr()
	}
	if b.proc.TclAddr() == "" {
		t.Fatalf("the launched OpenOCD has no Tcl RPC server: %v", b.proc.RPCErr())
	}
	return JoinAddr(b.proc.TclAddr(), TclRPC)
}

// hostport is the HOST:PORT of the board's OpenOCD server tr.
func (b *board) hostport(t testing.TB, tr Transport) string {
	hp, _, _ := SplitAddr(b.addr(t, tr), 0)
	return hp
}

// dialOver opens a session with the board's OpenOCD over tr that ends
// with the test.
func (b *board) dialOver(t testing.TB, tr Transport, opts ...Option) *Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := Dial(ctx, b.addr(t, tr), append([]Option{anyAddr}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	if s.Transport() != tr {
		t.Fatalf("dialled %s, got a session over %s", tr, s.Transport())
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestE2ELaunchPrefersTclRPC checks that a launched OpenOCD serves
// sessions over Tcl RPC, and over telnet where a configuration file
// disabled the Tcl server and ran init, so that it cannot be enabled again.
func TestE2ELaunchPrefersTclRPC(t *testing.T) {
	t.Parallel()
	b := startBoard(t)
	if b.proc.Transport() != TclRPC || b.proc.RPCErr() != nil || !strings.HasPrefix(b.proc.Addr(), "tcl://127.0.0.1:") {
		t.Errorf("Transport() = %v (%v), Addr() = %q, want Tcl RPC", b.proc.Transport(), b.proc.RPCErr(), b.proc.Addr())
	}
	s := b.dial(t)
	if s.Transport() != TclRPC {
		t.Errorf("Process.Dial gave a session over %v", s.Transport())
	}
	checkValues(t, s, uint64(sim.FlashBase), 32, []uint64{uint64(sim.RAMBase + sim.RAMSize)})
	b.proc.Stop() // the board's JTAG port takes one OpenOCD at a time

	cfg := b.cfg
	noTcl := filepath.Join(t.TempDir(), "no-tcl.cfg")
	must(t, os.WriteFile(noTcl, []byte("tcl_port disabled\ninit\n"), 0o644))
	cfg.Configs = append(cfg.Configs[:len(cfg.Configs):len(cfg.Configs)], noTcl)
	p, err := Launch(testCtx(t), cfg)
	must(t, err)
	t.Cleanup(func() { p.Stop() })
	if p.Transport() != Telnet || p.RPCErr() == nil || p.Addr() != p.TelnetAddr() {
		t.Errorf("Tcl server disabled: Transport() = %v (%v), Addr() = %q", p.Transport(), p.RPCErr(), p.Addr())
	}
	t.Logf("fell back to telnet: %v", p.RPCErr())
	s2, err := p.Dial(testCtx(t))
	must(t, err)
	defer s2.Close()
	if s2.Transport() != Telnet {
		t.Errorf("Process.Dial gave a session over %v", s2.Transport())
	}
	checkValues(t, s2, uint64(sim.FlashBase), 32, []uint64{uint64(sim.RAMBase + sim.RAMSize)})

	cfg.Transport = TclRPC
	p3, err := Launch(testCtx(t), cfg)
	if err == nil {
		p3.Stop()
		t.Fatal("a required Tcl RPC server that is disabled: Launch succeeded")
	}
	t.Logf("required: %v", err)
}

// The tests below drive the real openocd against the virtual board.

func TestE2EReadWriteMemory(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		b := startBoard(t)
		s := b.dialOver(t, tr)
		ctx := testCtx(t)

		tests := []struct {
			name   string
			addr   uint64
			width  int
			values []uint64
		}{
			{"8-bit one", memBase, 8, []uint64{0xa5}},
			{"8-bit several, unaligned", memBase + 0x11, 8, []uint64{1, 2, 3, 0xff, 0x80}},
			{"16-bit", memBase + 0x20, 16, []uint64{0xbeef, 0, 0xffff}},
			{"32-bit", memBase + 0x40, 32, []uint64{0xdeadbeef, 0x12345678, 0, 0xffffffff}},
			{"32-bit, more than one line holds", memBase + 0x100, 32, sequence(1000, 0x01010101)},
			{"GPIO output register", uint64(sim.GPIOODR), 32, []uint64{1 << sim.LEDPin}},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				must(t, s.WriteMemory(ctx, tt.addr, tt.width, tt.values))
				got, err := s.ReadMemory(ctx, tt.addr, tt.width, len(tt.values))
				must(t, err)
				if fmt.Sprint(got) != fmt.Sprint(tt.values) {
					t.Errorf("read back %#x, want %#x", got, tt.values)
				}
				// The board agrees.
				for i, v := range tt.values {
					a := uint32(tt.addr) + uint32(i*tt.width/8)
					bv, err := b.mem.Read(a, tt.width)
					must(t, err)
					if uint64(bv) != v {
						t.Fatalf("the board holds 0x%x at 0x%x, want 0x%x", bv, a, v)
					}
				}
			})
		}

		t.Run("board writes are seen", func(t *testing.T) {
			must(t, b.mem.Write(memBase+0x80, 32, 0xcafef00d))
			checkValues(t, s, memBase+0x80, 32, []uint64{0xcafef00d})
		})
		t.Run("a large read", func(t *testing.T) {
			got, err := s.ReadMemory(ctx, uint64(sim.FlashBase), 32, 4096)
			must(t, err)
			if got[0] != uint64(sim.RAMBase+sim.RAMSize) || got[4095] != 0xffffffff {
				t.Errorf("flash starts 0x%x and ends 0x%x, want the initial SP and erased words", got[0], got[4095])
			}
		})
		t.Run("64-bit as two 32-bit words on the board's 32-bit MEM-AP", func(t *testing.T) {
			// OpenOCD refuses width 64 on this bus.
			if _, err := s.Command(ctx, "read_memory 0x20000100 64 1"); err == nil {
				t.Fatal("OpenOCD read 64 bits from a 32-bit MEM-AP: the board no longer models a 32-bit core")
			}
			addr := uint64(memBase + 0x200)
			vals := []uint64{0x1122334455667788, 0xffffffff00000000, 0x00000000ffffffff}
			must(t, s.WriteMemory(ctx, addr, 64, vals))
			checkValues(t, s, addr, 64, vals)
			// Little-endian: the low word first, as the board holds it.
			for i, want := range []uint32{0x55667788, 0x11223344, 0, 0xffffffff, 0xffffffff, 0} {
				got, err := b.mem.Read(uint32(addr)+uint32(4*i), 32)
				must(t, err)
				if got != want {
					t.Errorf("word %d at 0x%x: the board holds 0x%x, want 0x%x", i, uint32(addr)+uint32(4*i), got, want)
				}
			}
			if !s.split64 {
				t.Error("the session did not note that the target has no 64-bit accesses")
			}
			// A fault is still a fault.
			_, err := s.ReadMemory(ctx, 0x30000000, 64, 1)
			var ce *CommandError
			if !errors.As(err, &ce) {
				t.Errorf("a 64-bit read of unmapped memory: %v, want a command error", err)
			}
			if err := s.WriteMemory(ctx, 0x30000000, 64, []uint64{1}); !errors.As(err, &ce) {
				t.Errorf("a 64-bit write to unmapped memory: %v, want a command error", err)
			}
		})
	})
}

// TestE2E64BitFault is a 64-bit access whose address faults on a session
// that has not learnt the target's width yet: the fault is returned, and
// the width is not taken for the cause.
func TestE2E64BitFault(t *testing.T) {
	t.Parallel()
	b := startBoard(t)
	s := b.dial(t)
	ctx := testCtx(t)
	_, err := s.ReadMemory(ctx, 0x30000000, 64, 1)
	checkCommandError(t, err, "read_memory 0x30000000 64 1",
		"read_memory: read at 0x30000000 with width=64 and count=1 failed\nread_memory: failed to read memory")
	if s.split64 {
		t.Error("a fault at both widths made the session split 64-bit accesses")
	}
}

func sequence(n int, step uint64) []uint64 {
	v := make([]uint64, n)
	for i := range v {
		v[i] = uint64(i) * step & 0xffffffff
	}
	return v
}

func TestE2EErrors(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		b := startBoard(t)
		s := b.dialOver(t, tr)
		ctx := testCtx(t)

		_, err := s.ReadMemory(ctx, 0x30000000, 32, 1)
		checkCommandError(t, err, "read_memory 0x30000000 32 1",
			"JTAG-DP STICKY ERROR\n"+
				"Failed to read memory at 0x30000000\n"+
				"read_memory: read at 0x30000000 with width=32 and count=1 failed\n"+
				"read_memory: failed to read memory")
		checkValues(t, s, uint64(sim.FlashBase), 32, []uint64{uint64(sim.RAMBase + sim.RAMSize)})

		err = s.WriteMemory(ctx, 0x30000000, 16, []uint64{1, 2})
		checkCommandError(t, err, "write_memory 0x30000000 16 {0x1 0x2}",
			"JTAG-DP STICKY ERROR\n"+
				"Failed to write memory at 0x30000000\n"+
				"write_memory: write at 0x30000000 with width=16 and count=2 failed\n"+
				"write_memory: failed to write memory")

		_, err = s.Command(ctx, "mdw 0x30000000")
		checkCommandError(t, err, "mdw 0x30000000", "JTAG-DP STICKY ERROR\nFailed to read memory at 0x30000000")
		var ce *CommandError
		if errors.As(err, &ce) && ce.Code != -107 {
			t.Errorf("mdw's error number is %d, want -107 (JTAG device error)", ce.Code)
		}

		_, err = s.Command(ctx, "foo")
		checkCommandError(t, err, "foo", `invalid command name "foo"`)
		if err.Error() != `openocd: foo: invalid command name "foo"` {
			t.Errorf("got %q", err)
		}
		_, err = s.Command(ctx, "set x {")
		checkCommandError(t, err, "set x {", "missing close-brace")

		// After all that the session still works.
		must(t, s.WriteMemory(ctx, memBase, 32, []uint64{7}))
		checkValues(t, s, memBase, 32, []uint64{7})
	})
}

func TestE2ETcl(t *testing.T) {
	t.Parallel()
	b := startBoard(t)
	tests := []struct {
		name, cmd, want string
		wantTCL         string // when it differs over Tcl RPC
		tclOnly         bool   // telnet cannot carry the command
	}{
		{name: "braces keep everything", cmd: `return {$x [y] "z" \ é}`, want: `$x [y] "z" \ é`},
		{name: "substitution", cmd: `set _t 5; return "[expr {$_t * 2}] \$"`, want: `10 $`},
		{name: "several lines", cmd: "set a 1\nset b 2\nexpr {$a + $b}", want: "3"},
		{name: "a tab", cmd: "return \"a\tb\"", want: "a\tb"},
		{name: "empty result", cmd: "set _t {}", want: ""},
		{name: "output over several lines", cmd: "return \"one\ntwo\n\"", want: "one\ntwo\n"},
		{name: "control bytes in the output", cmd: `return "\x02\x031\x04"`, want: "\x02\x031\x04"},
		{name: "a NUL in the output", cmd: `return "a\x00b"`, want: `a\0b`, wantTCL: "a\x00b"},
		{name: "the Tcl RPC terminator in the output", cmd: `return "a\x1ab"`, want: "a\x1ab"},
		{name: "a NUL and the terminator in the command", cmd: "return {a\x00b\x1ac}", want: "a\x00b\x1ac", tclOnly: true},
		{name: "beyond the BMP", cmd: `return "é😀"`, want: "é😀", tclOnly: true},
		{name: "mdw output", cmd: "mdw 0x08000000 2", want: "0x08000000: 20010000 08000101 \n"},
	}
	for _, tr := range transports {
		s := b.dialOver(t, tr)
		t.Run(tr.String(), func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					if tt.tclOnly && tr != TclRPC {
						t.Skip("telnet cannot carry the command")
					}
					want := tt.want
					if tr == TclRPC && tt.wantTCL != "" {
						want = tt.wantTCL
					}
					got, err := s.Command(testCtx(t), tt.cmd)
					must(t, err)
					if got != want {
						t.Errorf("got %q, want %q", got, want)
					}
				})
			}
		})
	}
}

// samePorts returns the arguments that make another OpenOCD listen where
// one listened: on the telnet server's address and the Tcl RPC server's
// ("" when it had none).
func samePorts(telnet, tcl string) []string {
	_, port, _ := net.SplitHostPort(telnet)
	args := []string{"-c", "telnet_port " + port}
	if tcl != "" {
		_, port, _ := net.SplitHostPort(tcl)
		args = append(args, "-c", "tcl_port "+port)
	}
	return args
}

// TestE2EFallback removes read_memory and write_memory from OpenOCD, as
// releases before 0.12 lack them: the md and mw commands take over.
func TestE2EFallback(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		b := startBoard(t)
		s := b.dialOver(t, tr)
		ctx := testCtx(t)
		_, err := s.Command(ctx, "rename read_memory {}; rename write_memory {}")
		must(t, err)
		for _, width := range []int{8, 16, 32} {
			t.Run(fmt.Sprint(width), func(t *testing.T) {
				mask := uint64(1)<<width - 1
				vals := sequence(300, 0x9e3779b1)
				for i := range vals {
					vals[i] &= mask
				}
				addr := uint64(memBase + 0x400*width/8)
				must(t, s.WriteMemory(ctx, addr, width, vals))
				checkValues(t, s, addr, width, vals)
			})
		}
		if !s.noReadMemory || !s.noWriteMemory {
			t.Error("the session did not fall back")
		}
		_, err = s.ReadMemory(ctx, 0x30000000, 32, 1)
		checkCommandError(t, err, "mdw 0x30000000 1", "JTAG-DP STICKY ERROR\nFailed to read memory at 0x30000000")
	})
}

func TestE2EImage(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		b := startBoard(t)
		s := b.dialOver(t, tr)
		ctx := testCtx(t)
		dir := t.TempDir()
		img := make([]byte, 256)
		for i := range img {
			img[i] = byte(i*7 + 1)
		}
		path := filepath.Join(dir, "an image.bin") // a space, for the quoting
		must(t, os.WriteFile(path, img, 0o644))

		out, err := s.LoadImage(ctx, path, memBase)
		must(t, err)
		if !strings.Contains(out, "downloaded 256 bytes") {
			t.Errorf("load_image said %q", out)
		}
		must(t, s.VerifyImage(ctx, path, memBase))
		v, err := b.mem.Read(memBase+4, 32)
		must(t, err)
		if v != 0x322b241d {
			t.Errorf("the board holds 0x%x at 0x%x, want 0x322b241d", v, memBase+4)
		}

		// A raw binary shorter than the header OpenOCD reads to guess a file's
		// type loads because the type is given.
		tiny := filepath.Join(dir, "tiny.bin")
		must(t, os.WriteFile(tiny, []byte{0xde, 0xad, 0xbe, 0xef}, 0o644))
		if _, err := s.LoadImage(ctx, tiny, memBase+0x200); err != nil {
			t.Errorf("load a 4-byte image: %v", err)
		} else if v, _ := b.mem.Read(memBase+0x200, 32); v != 0xefbeadde {
			t.Errorf("the board holds 0x%x after loading the 4-byte image", v)
		}

		must(t, b.mem.Write(memBase+8, 8, 0))
		err = s.VerifyImage(ctx, path, memBase)
		var ce *CommandError
		if !errors.As(err, &ce) || !strings.Contains(ce.Output, "diff 0 address 0x20000108. Was 0x00 instead of 0x39") {
			t.Errorf("verify after a change: got %v, want a CommandError naming the difference", err)
		}

		_, err = s.LoadImage(ctx, filepath.Join(dir, "missing.bin"), memBase)
		if !errors.As(err, &ce) {
			t.Errorf("a missing image: got %v, want a CommandError", err)
		}
		t.Logf("missing image: %v", err)
	})
}

func TestE2EControl(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		b := startBoard(t)
		s := b.dialOver(t, tr)
		ctx := testCtx(t)
		must(t, s.Halt(ctx))
		must(t, s.Resume(ctx))
		for _, mode := range []string{"", "run", "halt", "init"} {
			must(t, s.Reset(ctx, mode))
		}
		if err := s.Reset(ctx, "later"); err == nil || err.Error() != `reset: mode "later": must be run, halt or init` {
			t.Errorf("got %v", err)
		}
	})
}

// TestE2EKilled kills OpenOCD under a session: the next read retries with
// back-off until its deadline and fails with ErrUnavailable, and so does a
// raw command, none of which could be sent.
func TestE2EKilled(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		b := startBoard(t)
		s := b.dialOver(t, tr)
		checkValues(t, s, uint64(sim.FlashBase), 32, []uint64{uint64(sim.RAMBase + sim.RAMSize)})
		must(t, osProcess(b.proc).Kill())
		<-b.proc.Done()

		// The deadline bounds the retries; the outcome is the same however
		// many fit in.
		short := func() context.Context {
			ctx, cancel := context.WithTimeout(testCtx(t), 300*time.Millisecond)
			t.Cleanup(cancel)
			return ctx
		}
		var err error
		within(t, 10*time.Second, "a command after OpenOCD died", func() {
			_, err = s.ReadMemory(short(), memBase, 32, 1)
		})
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("got %v, want ErrUnavailable", err)
		}
		// The dial is refused, or on a busy machine runs out of the short
		// deadline first: either way the address and the tries are named.
		want := "reconnect to openocd at " + b.addr(t, tr) + ": dial tcp " + b.hostport(t, tr) + ": "
		if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), " (tried ") {
			t.Errorf("got %q, want it to start %q and say how often it tried", err, want)
		}
		var ce *CommandError
		if errors.As(err, &ce) {
			t.Error("ErrUnavailable must not be a CommandError")
		}
		within(t, 10*time.Second, "another command", func() { _, err = s.Command(short(), "version") })
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("again: got %v, want ErrUnavailable", err)
		}
	})
}

// TestE2EComesBack kills OpenOCD under a session, and starts another on
// the same port while a read retries: the read returns the value.
func TestE2EComesBack(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		b := startBoard(t)
		var dials atomic.Int32
		var d net.Dialer
		s := b.dialOver(t, tr, WithDialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
			dials.Add(1)
			return d.DialContext(ctx, network, addr)
		}))
		checkValues(t, s, uint64(sim.FlashBase), 32, []uint64{uint64(sim.RAMBase + sim.RAMSize)})
		addr, tclAddr := b.proc.TelnetAddr(), b.proc.TclAddr()
		must(t, osProcess(b.proc).Kill())
		<-b.proc.Done()

		type result struct {
			vals []uint64
			err  error
		}
		done := make(chan result, 1)
		go func() {
			v, err := s.ReadMemory(testCtx(t), uint64(sim.FlashBase), 32, 1)
			done <- result{v, err}
		}()
		// Retrying: it has dialled the dead port twice more.
		deadline := time.Now().Add(10 * time.Second)
		for dials.Load() < 3 {
			if time.Now().After(deadline) {
				t.Fatal("the read did not retry")
			}
			time.Sleep(5 * time.Millisecond)
		}
		cfg := b.cfg
		cfg.Args = samePorts(addr, tclAddr)
		p, err := Launch(testCtx(t), cfg)
		must(t, err)
		t.Cleanup(func() { p.Stop() })
		r := <-done
		if r.err != nil || len(r.vals) != 1 || r.vals[0] != uint64(sim.RAMBase+sim.RAMSize) {
			t.Fatalf("got %v, %v, want the value once OpenOCD was back", r.vals, r.err)
		}
	})
}

// TestE2ELogFileFull runs OpenOCD with its log file on a full disk
// (/dev/full) and has it log as it works: it keeps answering, and LogErr
// says what the log lost.
func TestE2ELogFileFull(t *testing.T) {
	t.Parallel()
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	b := startBoard(t)
	b.proc.Stop() // the board's JTAG port takes one OpenOCD at a time
	cfg := b.cfg
	cfg.LogFile = filepath.Join(t.TempDir(), "openocd.log")
	if err := os.Symlink("/dev/full", cfg.LogFile); err != nil {
		t.Fatal(err)
	}
	p, err := Launch(testCtx(t), cfg)
	must(t, err)
	t.Cleanup(func() { p.Stop() })
	s, err := p.Dial(testCtx(t))
	must(t, err)
	t.Cleanup(func() { s.Close() })
	for i := range 20 {
		// echo logs a line, on the telnet session and on stderr.
		if _, err := s.Command(testCtx(t), fmt.Sprintf("echo {logged line %d}", i)); err != nil {
			t.Fatalf("OpenOCD stopped answering once its log failed: %v", err)
		}
	}
	checkValues(t, s, uint64(sim.FlashBase), 32, []uint64{uint64(sim.RAMBase + sim.RAMSize)})
	p.Stop()
	if err := p.LogErr(); err == nil || !strings.Contains(err.Error(), "bytes lost: no space left on device") {
		t.Errorf("LogErr = %v", err)
	}
}

// TestE2ERestarted replaces OpenOCD on the same port between commands: the
// session reconnects transparently.
func TestE2ERestarted(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		b := startBoard(t)
		s := b.dialOver(t, tr)
		checkValues(t, s, uint64(sim.FlashBase), 32, []uint64{uint64(sim.RAMBase + sim.RAMSize)})
		addr, tclAddr := b.proc.TelnetAddr(), b.proc.TclAddr()
		b.proc.Stop()

		// Another OpenOCD on the same port, as a bench restarting it would.
		cfg := b.cfg
		cfg.Args = samePorts(addr, tclAddr)
		p, err := Launch(testCtx(t), cfg)
		must(t, err)
		t.Cleanup(func() { p.Stop() })
		if p.TelnetAddr() != addr {
			t.Fatalf("the new OpenOCD listens on %s, want %s", p.TelnetAddr(), addr)
		}
		checkValues(t, s, uint64(sim.FlashBase), 32, []uint64{uint64(sim.RAMBase + sim.RAMSize)})
	})
}

// TestE2EStopped stops OpenOCD (SIGSTOP): a command times out at its
// deadline; once OpenOCD continues, the session reconnects and works.
func TestE2EStopped(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		b := startBoard(t)
		s := b.dialOver(t, tr)
		checkValues(t, s, uint64(sim.FlashBase), 32, []uint64{uint64(sim.RAMBase + sim.RAMSize)})
		pause(t, osProcess(b.proc))
		cont := sync.OnceFunc(func() { resume(osProcess(b.proc)) })
		defer cont()

		ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
		defer cancel()
		var err error
		took := within(t, 10*time.Second, "a command to a stopped OpenOCD", func() {
			_, err = s.ReadMemory(ctx, memBase, 32, 1)
		})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want a timeout", err)
		}
		// How much later than the deadline depends on the machine's load:
		// only an early end is wrong.
		if took < 300*time.Millisecond {
			t.Errorf("timed out after %v, before its 300ms deadline", took)
		}
		t.Logf("timeout: %v", err)

		cont()
		checkValues(t, s, uint64(sim.FlashBase), 32, []uint64{uint64(sim.RAMBase + sim.RAMSize)})
	})
}

// TestE2EScenarios runs the recorded scenarios against the real openocd.
func TestE2EScenarios(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		for _, sc := range scenarios {
			t.Run(sc.name, func(t *testing.T) {
				b := startBoard(t)
				s := b.dialOver(t, tr)
				side := func() {}
				if sc.side != nil {
					side = func() { sc.side(t, b.proc.TelnetAddr()) }
				}
				sc.run(t, s, side)
			})
		}
	})
}

func BenchmarkReadMemory32(b *testing.B) {
	bd := startBoard(b)
	for _, tr := range transports {
		b.Run(tr.String(), func(b *testing.B) {
			s := bd.dialOver(b, tr)
			ctx := context.Background()
			for b.Loop() {
				if _, err := s.ReadMemory(ctx, uint64(sim.CounterAddr), 32, 1); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestE2EKilledMidCommand kills OpenOCD while a command runs: the command
// fails with ErrUnavailable at once, saying its effect is unknown.
func TestE2EKilledMidCommand(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		b := startBoard(t)
		s := b.dialOver(t, tr)
		// The command writes the board's memory, then sleeps: OpenOCD
		// dies once the board saw the write, so while the command runs,
		// however long a loaded machine takes to get there.
		const flag = memBase + 0x300
		go func() {
			deadline := time.Now().Add(10 * time.Second)
			for time.Now().Before(deadline) {
				if v, _ := b.mem.Read(flag, 32); v == 0x5a {
					osProcess(b.proc).Kill()
					return
				}
				time.Sleep(time.Millisecond)
			}
		}()
		cmd := fmt.Sprintf("mww 0x%x 0x5a; sleep 2000", flag)
		var err error
		within(t, 10*time.Second, "a command OpenOCD died during", func() {
			_, err = s.Command(testCtx(t), cmd)
		})
		if !errors.Is(err, ErrUnavailable) {
			t.Fatalf("got %v, want ErrUnavailable", err)
		}
		want := "openocd at " + b.addr(t, tr) + `: connection lost while "` + cmd + `" ran (its effect is unknown): EOF`
		if err.Error() != want {
			t.Errorf("got  %q\nwant %q", err, want)
		}
	})
}

func TestE2ELaunchStop(t *testing.T) {
	t.Parallel()
	eachTransport(t, func(t *testing.T, tr Transport) {
		b := startBoard(t)
		pid := b.proc.Pid()
		if !strings.Contains(b.proc.Output(), "Listening on port") {
			t.Errorf("Output() = %q", b.proc.Output())
		}
		s := b.dialOver(t, tr)
		checkValues(t, s, uint64(sim.FlashBase), 32, []uint64{uint64(sim.RAMBase + sim.RAMSize)})
		took := within(t, 10*time.Second, "Stop", func() { must(t, b.proc.Stop()) })
		t.Logf("Stop took %v", took)
		if !gone(pid) {
			t.Errorf("openocd (pid %d) is still running after Stop", pid)
		}
		if err := b.proc.Stop(); err != nil {
			t.Errorf("second Stop: %v", err)
		}
		_, err := s.Command(testCtx(t), "version")
		if !errors.Is(err, ErrUnavailable) {
			t.Errorf("a command after Stop: got %v, want ErrUnavailable", err)
		}
	})
}

// TestE2ELaunchFails starts OpenOCD with nothing at the JTAG address.
func TestE2ELaunchFails(t *testing.T) {
	t.Parallel()
	bin := needOpenOCD(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	addr := ln.Addr().String()
	ln.Close()
	cfg := filepath.Join(t.TempDir(), "board.cfg")
	must(t, os.WriteFile(cfg, []byte(jtag.OpenOCDConfig(addr)), 0o644))
	var p *Process
	within(t, 10*time.Second, "Launch", func() {
		p, err = Launch(testCtx(t), LaunchConfig{Procs: hostProcs, Dial: dial.Anywhere(), Binary: bin, Configs: []string{cfg}, Env: []string{"HOME=" + filepath.Dir(cfg)}})
	})
	if p != nil || err == nil {
		t.Fatalf("got %v, %v, want an error", p, err)
	}
	want := "launch openocd: exited with exit status 1 before its telnet server was ready; openocd said:\n\tError: Error on socket 'Failed to connect'"
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("got  %q\nwant it to start %q", err, want)
	}
}

// BenchmarkCommand measures a round trip that does not touch the target:
// the cost of the session itself, per transport.
func BenchmarkCommand(b *testing.B) {
	bd := startBoard(b)
	for _, tr := range transports {
		b.Run(tr.String(), func(b *testing.B) {
			s := bd.dialOver(b, tr)
			ctx := context.Background()
			for b.Loop() {
				if _, err := s.Command(ctx, "return 1"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestE2ETclNotifications turns on the Tcl RPC server's target
// notifications, which arrive outside replies: commands still get their
// own replies, and the notifications reach the log hook.
func TestE2ETclNotifications(t *testing.T) {
	t.Parallel()
	b := startBoard(t)
	var mu sync.Mutex
	var logged []string
	s := b.dialOver(t, TclRPC, WithLog(func(l string) {
		mu.Lock()
		logged = append(logged, l)
		mu.Unlock()
	}))
	ctx := testCtx(t)
	_, err := s.Command(ctx, "tcl_notifications on")
	must(t, err)
	for range 3 {
		must(t, s.Halt(ctx))
		must(t, s.Resume(ctx))
		must(t, s.Reset(ctx, "run"))
		must(t, s.WriteMemory(ctx, memBase, 32, []uint64{0x600d}))
		checkValues(t, s, memBase, 32, []uint64{0x600d})
		out, err := s.Command(ctx, "return done")
		if err != nil || out != "done" {
			t.Fatalf("got %q, %v, want done", out, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	n := 0
	for _, l := range logged {
		if strings.HasPrefix(l, "type target_") {
			n++
		}
	}
	if n == 0 {
		t.Errorf("no notification reached the log hook; it got %q", logged)
	}
	t.Logf("%d notifications, e.g. %q", n, logged[0])
}

package gdbremote

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// The session satisfies the runner's typed probe contract structurally.
var (
	_ interface {
		ReadMemory(ctx context.Context, addr uint64, width, count int) ([]uint64, error)
		WriteMemory(ctx context.Context, addr uint64, width int, values []uint64) error
		Halt(ctx context.Context) error
		Resume(ctx context.Context) error
		Reset(ctx context.Context, mode string) error
		Close() error
	} = (*Session)(nil)
	_ interface {
		Command(ctx context.Context, cmd string) (string, error)
	} = (*Session)(nil)
	_ interface {
		LoadImage(ctx context.Context, path string, offset uint64) (string, error)
		VerifyImage(ctx context.Context, path string, offset uint64) error
	} = (*Session)(nil)
	_ interface{ LastAccessHalted() bool } = (*Session)(nil)
	_ interface{ TestFailure() bool }      = (*TargetError)(nil)
	_ interface{ TestFailure() bool }      = (*VerifyError)(nil)
	_ interface{ BenchFault() bool }       = (*unavailableError)(nil)
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func dialStub(t *testing.T, s *simStub, opts Options) *Session {
	t.Helper()
	sess, err := Dial(testCtx(t), s.addr(), gates(opts))
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

func TestMemoryRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(*simStub)
	}{
		{"no-ack mode, X packets", func(*simStub) {}},
		{"ack mode, M packets", func(s *simStub) { s.noAck, s.xPackets = false, false }},
		{"small packets", func(s *simStub) { s.packetSize = 0x40 }},
		{"no packet size offered", func(s *simStub) { s.packetSize = 0 }},
		{"run-length encoded replies", func(s *simStub) { s.rle = true }},
		{"damaged replies resent in ack mode", func(s *simStub) { s.noAck, s.corrupt = false, 3 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stub := newSimStub(t, func(s *simStub) {
				tc.setup(s)
			})
			sess := dialStub(t, stub, Options{})
			ctx := testCtx(t)
			for _, width := range []int{8, 16, 32, 64} {
				n := 300 // more than one small packet holds
				vals := make([]uint64, n)
				for i := range vals {
					// Bytes the protocol reserves ($ # } *) and zero runs
					// for the run-length encoding.
					v := uint64(0x7d2a2423)*uint64(i+1) ^ uint64(width)
					if i%5 == 0 {
						v = 0
					}
					if width < 64 {
						v &= 1<<width - 1
					}
					vals[i] = v
				}
				addr := uint64(0x20000100 + width)
				if err := sess.WriteMemory(ctx, addr, width, vals); err != nil {
					t.Fatalf("write %d-bit: %v", width, err)
				}
				got, err := sess.ReadMemory(ctx, addr, width, n)
				if err != nil {
					t.Fatalf("read %d-bit: %v", width, err)
				}
				if !slices.Equal(got, vals) {
					t.Fatalf("%d-bit: read back %x, wrote %x", width, got[:8], vals[:8])
				}
				// Little-endian in the target's memory.
				raw, _ := stub.mem(addr, width/8)
				var w [8]byte
				copy(w[:], raw)
				if binary.LittleEndian.Uint64(w[:]) != vals[0] {
					t.Fatalf("%d-bit: memory holds % x for 0x%x", width, raw, vals[0])
				}
			}
			if sess.LastAccessHalted() {
				t.Error("LastAccessHalted on a halted target")
			}
		})
	}
}

func TestAckModeAcknowledgesEveryReply(t *testing.T) {
	// Acknowledgements ride on the next request; with none coming, a
	// timer sends them alone. Either way the stub gets one per reply.
	stub := newSimStub(t, func(s *simStub) { s.noAck = false })
	sess := dialStub(t, stub, Options{})
	ctx := testCtx(t)
	for range 3 {
		if _, err := sess.ReadMemory(ctx, 0x20000000, 32, 1); err != nil {
			t.Fatal(err)
		}
	}
	acked := func() bool {
		stub.mu.Lock()
		defer stub.mu.Unlock()
		return stub.gotAck == stub.sentAckMode
	}
	for start := time.Now(); !acked(); time.Sleep(time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			stub.mu.Lock()
			t.Fatalf("the stub sent %d packets and got %d acknowledgements", stub.sentAckMode, stub.gotAck)
		}
	}
}

func TestPacketsFitPacketSize(t *testing.T) {
	stub := newSimStub(t, func(s *simStub) {
		s.packetSize = 0x40
	})
	sess := dialStub(t, stub, Options{})
	ctx := testCtx(t)
	vals := make([]uint64, 100)
	for i := range vals {
		vals[i] = 0x23 // '#', escaped in X packets: each byte takes two
	}
	if err := sess.WriteMemory(ctx, 0x20000000, 8, vals); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.ReadMemory(ctx, 0x20000000, 8, 100); err != nil {
		t.Fatal(err)
	}
	for _, p := range stub.received() {
		if len(p) > 0x40 {
			t.Errorf("packet of %d bytes exceeds the stub's PacketSize 0x40: %.40q...", len(p), p)
		}
	}
}

func TestTargetFault(t *testing.T) {
	stub := newSimStub(t)
	sess := dialStub(t, stub, Options{})
	ctx := testCtx(t)
	_, err := sess.ReadMemory(ctx, 0xfffffff0, 32, 1)
	var te *TargetError
	if !errors.As(err, &te) || !te.TestFailure() {
		t.Fatalf("read of a faulting address: %v, want a *TargetError", err)
	}
	if want := "reading 4 bytes at 0xfffffff0: the target refused (E14)"; !strings.HasSuffix(err.Error(), want) {
		t.Errorf("error %q, want it to end %q", err, want)
	}
	// A read that runs off the end of RAM names where it failed.
	_, err = sess.ReadMemory(ctx, 0x2000fffc, 32, 1000)
	if err == nil || !strings.Contains(err.Error(), "reading 4000 bytes at 0x2000fffc") {
		t.Errorf("read off the end: %v", err)
	}
	err = sess.WriteMemory(ctx, 0x10, 16, []uint64{1})
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "writing 2 bytes at 0x10: the target refused (E14)") {
		t.Errorf("write of a faulting address: %v", err)
	}
	// The session remains usable.
	if _, err := sess.ReadMemory(ctx, 0x20000000, 32, 1); err != nil {
		t.Errorf("read after a fault: %v", err)
	}
}

func TestBadArguments(t *testing.T) {
	stub := newSimStub(t)
	sess := dialStub(t, stub, Options{})
	ctx := testCtx(t)
	if _, err := sess.ReadMemory(ctx, 0x20000000, 12, 1); err == nil {
		t.Error("width 12 accepted")
	}
	if _, err := sess.ReadMemory(ctx, 0x20000000, 32, 1<<30); err == nil {
		t.Error("a 4 GiB read accepted")
	}
	if err := sess.WriteMemory(ctx, 0x20000000, 8, []uint64{0x100}); err == nil {
		t.Error("0x100 written as a byte")
	}
	if err := sess.Reset(ctx, "sideways"); err == nil {
		t.Error("reset mode sideways accepted")
	}
	if _, err := sess.ReadMemory(ctx, 0xfffffffffffffffc, 32, 2); err == nil || !strings.Contains(err.Error(), "past the end of the address space") {
		t.Errorf("a read past 2^64: %v", err)
	}
	if _, err := sess.Command(ctx, strings.Repeat("x", 5000)); err == nil || !strings.Contains(err.Error(), "the stub takes at most") {
		t.Errorf("a monitor command longer than a packet: %v", err)
	}
	for _, p := range stub.received() {
		if p[0] == 'm' || p[0] == 'M' || p[0] == 'X' || strings.HasPrefix(p, "qRcmd") {
			t.Errorf("a refused argument reached the stub: %q", p)
		}
	}
	if _, err := sess.ReadMemory(ctx, 0x20000000, 32, 1); err != nil {
		t.Errorf("the session broke after a refused argument: %v", err)
	}
}

func TestRunningTargetHaltsForAccessAndResumes(t *testing.T) {
	stub := newSimStub(t, func(s *simStub) { s.stopOnAttach = true })
	stub.setRunning(true)
	sess := dialStub(t, stub, Options{Attach: AttachRunning})
	ctx := testCtx(t)
	if !stub.waitRunning(t, true) {
		t.Fatal("the target does not run after attaching with AttachRunning")
	}
	v, err := sess.ReadMemory(ctx, 0x20000000, 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	if want := uint64(0x150e0700); v[0] != want {
		t.Errorf("read 0x%x, want 0x%x", v[0], want)
	}
	if !sess.LastAccessHalted() {
		t.Error("LastAccessHalted is false after reading a running target")
	}
	if !stub.waitRunning(t, true) {
		t.Error("the target was left halted after the read")
	}
	if err := sess.WriteMemory(ctx, 0x20000000, 32, []uint64{7}); err != nil {
		t.Fatal(err)
	}
	if !sess.LastAccessHalted() || !stub.waitRunning(t, true) {
		t.Error("a write to a running target did not halt and resume it")
	}
	if err := sess.Halt(ctx); err != nil {
		t.Fatal(err)
	}
	if stub.isRunning() {
		t.Fatal("Halt left the target running")
	}
	if _, err := sess.ReadMemory(ctx, 0x20000000, 32, 1); err != nil {
		t.Fatal(err)
	}
	if sess.LastAccessHalted() {
		t.Error("LastAccessHalted after reading a halted target")
	}
	if stub.isRunning() {
		t.Error("a read resumed a target the caller halted")
	}
	if err := sess.Halt(ctx); err != nil {
		t.Errorf("Halt of a halted target: %v", err)
	}
	if err := sess.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if !stub.waitRunning(t, true) {
		t.Error("Resume left the target halted")
	}
	// A resumed target keeps running after Close: the session detaches.
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	if !stub.waitRunning(t, true) || !stub.detached() {
		t.Error("Close did not detach and leave the target running")
	}
}

func TestResumeWithoutVCont(t *testing.T) {
	stub := newSimStub(t, func(s *simStub) {
		s.vCont = false
	})
	sess := dialStub(t, stub, Options{})
	ctx := testCtx(t)
	if err := sess.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if !stub.waitRunning(t, true) {
		t.Fatal("c did not resume the target")
	}
	if !slices.Contains(stub.received(), "c") {
		t.Errorf("packets %q hold no c", stub.received())
	}
}

func TestAttach(t *testing.T) {
	for _, tc := range []struct {
		name        string
		running     bool // before attach
		qemuLike    bool // the stub reports the stop its attach caused
		mode        AttachMode
		wantRunning bool
	}{
		{"QEMU-like stub, running guest", true, true, AttachAuto, true},
		{"QEMU-like stub, paused guest", false, true, AttachAuto, false},
		{"silent stub that halted on attach", true, false, AttachAuto, false},
		{"silent stub, AttachRunning", true, false, AttachRunning, true},
		{"QEMU-like stub, AttachHalted", true, true, AttachHalted, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stub := newSimStub(t, func(s *simStub) {
				s.stopOnAttach = tc.qemuLike
			})
			stub.setRunning(tc.running)
			sess := dialStub(t, stub, Options{Attach: tc.mode})
			if sess.WasRunning() != tc.wantRunning {
				t.Errorf("WasRunning() = %v, want %v", sess.WasRunning(), tc.wantRunning)
			}
			if !stub.waitRunning(t, tc.wantRunning) {
				t.Errorf("after Dial the target runs: %v, want %v", !tc.wantRunning, tc.wantRunning)
			}
			sess.Close()
			if !stub.waitRunning(t, tc.wantRunning) {
				t.Errorf("after Close the target runs: %v, want %v", !tc.wantRunning, tc.wantRunning)
			}
		})
	}
}

func TestCloseLeavesHaltedTargetHalted(t *testing.T) {
	stub := newSimStub(t, func(s *simStub) {
		s.stopOnAttach = true
	})
	stub.setRunning(true)
	sess := dialStub(t, stub, Options{})
	if err := sess.Halt(testCtx(t)); err != nil {
		t.Fatal(err)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	if err := sess.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if stub.isRunning() || stub.detached() {
		t.Error("Close resumed a target the caller halted")
	}
	if _, err := sess.ReadMemory(testCtx(t), 0x20000000, 8, 1); !errors.Is(err, ErrClosed) {
		t.Errorf("read after Close: %v, want ErrClosed", err)
	}
}

func TestCommand(t *testing.T) {
	stub := newSimStub(t)
	sess := dialStub(t, stub, Options{})
	ctx := testCtx(t)
	out, err := sess.Command(ctx, "info")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.Repeat("line of monitor output\n", 100); out != want {
		t.Errorf("output %d bytes, want %d", len(out), len(want))
	}
	_, err = sess.Command(ctx, "fail")
	var te *TargetError
	if !errors.As(err, &te) || te.Reply != "E02" {
		t.Errorf("refused command: %v", err)
	}
	stub.mu.Lock()
	stub.rcmd = false
	stub.mu.Unlock()
	if _, err := sess.Command(ctx, "info"); !errors.Is(err, ErrNotSupported) {
		t.Errorf("qRcmd on a stub without it: %v, want ErrNotSupported", err)
	}
	if err := sess.Reset(ctx, "run"); !errors.Is(err, ErrNotSupported) || !strings.Contains(err.Error(), "not supported by this stub") {
		t.Errorf("reset on a stub without monitor commands: %v", err)
	}
}

func TestReset(t *testing.T) {
	stub := newSimStub(t, func(s *simStub) {
		s.stopOnAttach = true
	})
	stub.setRunning(true)
	sess := dialStub(t, stub, Options{})
	ctx := testCtx(t)
	if err := sess.Reset(ctx, "halt"); err != nil {
		t.Fatal(err)
	}
	if stub.resetCount() != 1 || stub.isRunning() {
		t.Errorf("reset halt: %d resets, running %v", stub.resetCount(), stub.isRunning())
	}
	if err := sess.Reset(ctx, "run"); err != nil {
		t.Fatal(err)
	}
	if stub.resetCount() != 2 || !stub.waitRunning(t, true) {
		t.Errorf("reset run: %d resets, running %v", stub.resetCount(), stub.isRunning())
	}
	// A stub that does not know the command says so.
	sess2 := dialStub(t, stub, Options{ResetCommand: "frobnicate"})
	err := sess2.Reset(ctx, "halt")
	var te *TargetError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "unknown command") {
		t.Errorf("reset with an unknown command: %v", err)
	}
}

// A stub that refuses a monitor command with only a number (gdbserver's
// E01) says why in what it printed first: the error keeps it.
func TestRefusedCommandKeepsOutput(t *testing.T) {
	stub := newSimStub(t, func(s *simStub) { s.refuseUnknown = true })
	sess := dialStub(t, stub, Options{ResetCommand: "reset halt please"})
	ctx := testCtx(t)
	want := `the target refused (E01); the stub printed: Unknown monitor command. | The following monitor commands are supported: | exit`
	for _, tc := range []struct {
		name string
		do   func() error
		op   string
	}{
		{"monitor step", func() error { _, err := sess.Command(ctx, "frobnicate"); return err }, `monitor "frobnicate": `},
		{"reset", func() error { return sess.Reset(ctx, "halt") }, `reset with monitor "reset halt please": `},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			var te *TargetError
			if !errors.As(err, &te) {
				t.Fatalf("got %v, want a *TargetError", err)
			}
			if err.Error() != tc.op+want {
				t.Errorf("error\n%s\nwant\n%s", err, tc.op+want)
			}
		})
	}
}

func TestHandshakeFailures(t *testing.T) {
	for _, tc := range []struct {
		name     string
		greeting []byte
		want     string
	}{
		{"OpenOCD telnet port", []byte("\xff\xfb\x01\xff\xfb\x03\xff\xfd\x03Open On-Chip Debugger\r\n> "),
			"is an OpenOCD telnet port, not a GDB remote stub: use openocd: "},
		{"garbage", []byte("SSH-2.0-OpenSSH_9.2\r\n"), "does not speak the GDB remote protocol: it sent \"SSH-2.0-OpenSSH_9.2\\r\\n\""},
		{"other telnet server", []byte("\xff\xfd\x18\xff\xfd\x20"), "is a telnet server, not a GDB remote stub"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stub := newSimStub(t, func(s *simStub) { s.greeting = tc.greeting })
			_, err := Dial(testCtx(t), stub.addr(), gates(Options{HandshakeTimeout: 10 * time.Second}))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !errors.Is(err, ErrUnavailable) {
				t.Fatalf("Dial: %v, want an ErrUnavailable saying %q", err, tc.want)
			}
			if tc.name == "OpenOCD telnet port" {
				want := stub.addr() + " is an OpenOCD telnet port, not a GDB remote stub: use openocd: " + stub.addr()
				if !strings.HasSuffix(err.Error(), want) {
					t.Errorf("Dial: %v, want it to end %q", err, want)
				}
			}
		})
	}
}

func TestHandshakeSilentServer(t *testing.T) {
	// A server that accepts and never answers: the handshake timeout
	// bounds the wait.
	stub := newSimStub(t, func(s *simStub) {
		s.hang = true
	})
	_, err := Dial(testCtx(t), stub.addr(), gates(Options{HandshakeTimeout: 2 * time.Second}))
	if err == nil || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no answer within 2s") {
		t.Fatalf("Dial of a silent server: %v", err)
	}
}

func TestNothingListening(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	_, err = Dial(testCtx(t), addr, gates(Options{}))
	if err == nil || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "gdb "+addr+": connect") {
		t.Fatalf("Dial with nothing listening: %v", err)
	}
}

func TestCancelBreaksSessionCleanly(t *testing.T) {
	stub := newSimStub(t, func(s *simStub) { s.stopOnAttach = true })
	stub.setRunning(true)
	sess := dialStub(t, stub, Options{})
	if !stub.waitRunning(t, true) {
		t.Fatal("the target does not run after attaching")
	}
	stub.mu.Lock()
	stub.hang = true
	n := len(stub.packets)
	stub.mu.Unlock()
	ctx, cancel := context.WithCancel(testCtx(t))
	go func() {
		// Cancel once the request reached the stub.
		for {
			stub.mu.Lock()
			arrived := len(stub.packets) > n && stub.packets[len(stub.packets)-1][0] == 'm'
			stub.mu.Unlock()
			if arrived {
				cancel()
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	_, err := sess.ReadMemory(ctx, 0x20000000, 32, 1)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("read cancelled while waiting: %v", err)
	}
	_, err = sess.ReadMemory(testCtx(t), 0x20000000, 32, 1)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "broke earlier") {
		t.Errorf("read after a cancelled one: %v", err)
	}
	// The stub recovers and answers the aborted read late; Close still
	// detaches, leaving running the target the read had halted.
	stub.mu.Lock()
	stub.hang = false
	stub.mu.Unlock()
	if err := sess.Close(); err != nil {
		t.Errorf("Close after a cancelled read: %v", err)
	}
	if !stub.waitRunning(t, true) || !stub.detached() {
		t.Error("Close after a cancelled read left the target halted")
	}
}

func TestReplyTimeout(t *testing.T) {
	stub := newSimStub(t)
	sess := dialStub(t, stub, Options{ReplyTimeout: 2 * time.Second})
	stub.mu.Lock()
	stub.hang = true
	stub.mu.Unlock()
	_, err := sess.ReadMemory(testCtx(t), 0x20000000, 32, 1)
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "no reply within 2s") {
		t.Fatalf("read from a hung stub: %v", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	stub := newSimStub(t, func(s *simStub) {
		s.stopOnAttach = true
	})
	stub.setRunning(true)
	sess := dialStub(t, stub, Options{})
	ctx := testCtx(t)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for g := range 8 {
		wg.Go(func() {
			addr := 0x20001000 + uint64(g)*0x100
			for i := range 20 {
				if err := sess.WriteMemory(ctx, addr, 32, []uint64{uint64(g*1000 + i)}); err != nil {
					errs <- err
					return
				}
				v, err := sess.ReadMemory(ctx, addr, 32, 1)
				if err != nil || v[0] != uint64(g*1000+i) {
					errs <- errors.Join(err, errors.New("read back a wrong value"))
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if !stub.waitRunning(t, true) {
		t.Error("the target was left halted")
	}
}

func TestLoadAndVerifyImage(t *testing.T) {
	stub := newSimStub(t)
	sess := dialStub(t, stub, Options{})
	ctx := testCtx(t)
	dir := t.TempDir()

	bin := filepath.Join(dir, "blob.bin")
	data := []byte("hilrun image }#$* with reserved bytes, and more text to cross packets")
	if err := os.WriteFile(bin, data, 0o644); err != nil {
		t.Fatal(err)
	}
	msg, err := sess.LoadImage(ctx, bin, 0x20000400)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(msg, "loaded 69 bytes in 1 segments") {
		t.Errorf("LoadImage said %q", msg)
	}
	if got, _ := stub.mem(0x20000400, len(data)); string(got) != string(data) {
		t.Errorf("memory holds %q", got)
	}
	if err := sess.VerifyImage(ctx, bin, 0x20000400); err != nil {
		t.Errorf("VerifyImage after LoadImage: %v", err)
	}
	stub.mu.Lock()
	stub.ram[0x402] ^= 0xff
	stub.mu.Unlock()
	err = sess.VerifyImage(ctx, bin, 0x20000400)
	var ve *VerifyError
	if !errors.As(err, &ve) || ve.N != 1 || !strings.Contains(err.Error(), "0x20000402: 0x93 instead of 0x6c") {
		t.Errorf("VerifyImage of a changed byte: %v", err)
	}

	elfPath := filepath.Join(dir, "fw.elf")
	if err := os.WriteFile(elfPath, tinyELF(0x20002000, []byte("segment-one"), 0x20003000, []byte("segment-two")), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := sess.LoadImage(ctx, elfPath, 0); err != nil {
		t.Fatal(err)
	}
	for _, w := range []struct {
		addr uint64
		s    string
	}{{0x20002000, "segment-one"}, {0x20003000, "segment-two"}} {
		if got, _ := stub.mem(w.addr, len(w.s)); string(got) != w.s {
			t.Errorf("0x%x holds %q, want %q", w.addr, got, w.s)
		}
	}
	if err := sess.VerifyImage(ctx, elfPath, 0); err != nil {
		t.Error(err)
	}
	// Out of RAM: the target refuses.
	if _, err := sess.LoadImage(ctx, bin, 0x10000000); !errors.As(err, new(*TargetError)) {
		t.Errorf("LoadImage outside RAM: %v", err)
	}
	if _, err := sess.LoadImage(ctx, filepath.Join(dir, "missing.bin"), 0); err == nil {
		t.Error("LoadImage of a missing file")
	}
}

// tinyELF returns a 32-bit little-endian ARM ELF file with two PT_LOAD
// segments.
func tinyELF(a1 uint64, d1 []byte, a2 uint64, d2 []byte) []byte {
	const ehsize, phsize = 52, 32
	le := binary.LittleEndian
	b := make([]byte, ehsize+2*phsize)
	copy(b, "\x7fELF\x01\x01\x01")
	le.PutUint16(b[16:], 2)  // ET_EXEC
	le.PutUint16(b[18:], 40) // EM_ARM
	le.PutUint32(b[20:], 1)
	le.PutUint32(b[28:], ehsize) // phoff
	le.PutUint16(b[40:], ehsize)
	le.PutUint16(b[42:], phsize)
	le.PutUint16(b[44:], 2)
	off := uint32(len(b))
	for i, sg := range []struct {
		addr uint64
		data []byte
	}{{a1, d1}, {a2, d2}} {
		ph := b[ehsize+i*phsize:]
		le.PutUint32(ph[0:], 1) // PT_LOAD
		le.PutUint32(ph[4:], off)
		le.PutUint32(ph[8:], uint32(sg.addr))
		le.PutUint32(ph[12:], uint32(sg.addr))
		le.PutUint32(ph[16:], uint32(len(sg.data)))
		le.PutUint32(ph[20:], uint32(len(sg.data)))
		le.PutUint32(ph[24:], 5)
		off += uint32(len(sg.data))
	}
	b = append(b, d1...)
	return append(b, d2...)
}

func TestLooksLike(t *testing.T) {
	for _, tc := range []struct {
		name     string
		in       string
		rsp, ocd bool
	}{
		{"QEMU's stop on attach", "$T02thread:01;#04", true, false},
		{"an ack and a reply", "+$OK#9a", true, false},
		{"the start of a packet", "$T05thr", true, false},
		{"a bad checksum", "$OK#00", false, false},
		{"OpenOCD's telnet banner", "\xff\xfb\x01\xff\xfb\x03\xff\xfd\x03Open On-Chip Debugger\r\n> ", false, true},
		{"text", "hello\r\n", false, false},
		{"nothing", "", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := LooksLikeRSP([]byte(tc.in)); got != tc.rsp {
				t.Errorf("LooksLikeRSP(%q) = %v", tc.in, got)
			}
			if got := LooksLikeOpenOCDTelnet([]byte(tc.in)); got != tc.ocd {
				t.Errorf("LooksLikeOpenOCDTelnet(%q) = %v", tc.in, got)
			}
		})
	}
}

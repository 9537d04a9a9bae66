package gdbremote

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.bug.st/serial"

	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/testenv"
)

const ubootBin = "/usr/lib/u-boot/qemu_arm/u-boot.bin"

// qemuGuest is U-Boot running under qemu-system-arm's virt machine, with
// its console on a pty and QEMU's gdbstub on a TCP port.
type qemuGuest struct {
	t       *testing.T
	gdbAddr string
	console serial.Port
	out     testenv.Buffer // everything the console printed
}

var ptyLine = regexp.MustCompile(`char device redirected to (\S+) \(label serial0\)`)

// startQEMU starts U-Boot under QEMU, paused at the first instruction
// when paused is true, and stops QEMU when the test ends.
func startQEMU(t *testing.T, paused bool) *qemuGuest {
	t.Helper()
	bin := testenv.NeedTool(t, "qemu-system-arm", "apt-get install qemu-system-arm")
	if _, err := os.Stat(ubootBin); err != nil {
		testenv.Missing(t, "U-Boot for QEMU is not installed (apt-get install u-boot-qemu): %v", err)
	}
	port := freePort(t)
	args := []string{"-M", "virt", "-nographic", "-monitor", "none", "-bios", ubootBin,
		"-serial", "pty", "-gdb", "tcp:127.0.0.1:" + port}
	if paused {
		args = append(args, "-S")
	}
	var stderr testenv.Buffer
	proc, err := process.Permit(environ.Host()).Start(process.Spec{Purpose: process.Emulator, Argv: append([]string{bin}, args...), Stdout: &stderr, Stderr: &stderr})
	if err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { proc.Wait(); close(exited) }()
	t.Cleanup(func() {
		proc.Kill()
		<-exited
	})
	g := &qemuGuest{t: t, gdbAddr: "127.0.0.1:" + port}
	var pty string
	waitFor(t, "QEMU to open the console pty", func() bool {
		select {
		case <-exited:
			t.Fatalf("QEMU exited: %s", stderr.String())
		default:
		}
		if m := ptyLine.FindStringSubmatch(stderr.String()); m != nil {
			pty = m[1]
			return true
		}
		return false
	})
	p, err := serial.Open(pty, &serial.Mode{BaudRate: 115200})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetReadTimeout(100 * time.Millisecond); err != nil {
		t.Fatal(err)
	}
	g.console = p
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 4096)
		for {
			n, err := p.Read(buf)
			if err != nil {
				return
			}
			g.out.Write(buf[:n])
		}
	}()
	t.Cleanup(func() {
		p.Close()
		<-readDone
	})
	return g
}

// freePort returns a TCP port nothing listens on now.
func freePort(t *testing.T) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// waitFor waits until cond holds; 60 s only bounds a hang.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for start := time.Now(); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Since(start) > 60*time.Second {
			t.Fatalf("waiting for %s: not within 60s", what)
		}
	}
}

// expect waits until the console printed want after byte offset from.
func (g *qemuGuest) expect(from int, want string) {
	g.t.Helper()
	waitFor(g.t, fmt.Sprintf("the console to print %q", want), func() bool {
		return strings.Contains(g.out.String()[from:], want)
	})
}

// prompt interrupts U-Boot's autoboot and waits for its prompt.
func (g *qemuGuest) prompt() {
	g.t.Helper()
	g.expect(0, "Hit any key to stop autoboot")
	g.send("\n")
	g.expect(0, "=> ")
}

func (g *qemuGuest) send(s string) {
	g.t.Helper()
	if _, err := g.console.Write([]byte(s)); err != nil {
		g.t.Fatal(err)
	}
}

// answers checks that the guest runs: U-Boot answers a command on its
// console.
func (g *qemuGuest) answers() {
	g.t.Helper()
	from := len(g.out.String())
	g.send("printenv arch\n")
	g.expect(from, "arch=arm")
}

// dialQEMU connects once QEMU listens: a refused connection means its
// gdbstub is not up yet, and retrying has no effect on the guest.
func dialQEMU(t *testing.T, addr string) *Session {
	t.Helper()
	ctx := testCtx(t)
	var s *Session
	waitFor(t, "QEMU's gdbstub to listen", func() bool {
		var err error
		s, err = Dial(ctx, addr, gates(Options{}))
		if err == nil {
			return true
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("Dial: %v", err)
		}
		return false
	})
	t.Cleanup(func() { s.Close() })
	return s
}

// pc reads the program counter, ARM register 15, as the stub writes it
// (8 hex digits, little-endian), from a g packet: QEMU answers p only to a
// debugger that read its target description.
func (s *Session) pc(t *testing.T) string {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(testCtx(t), "read pc"); err != nil {
		t.Fatal(err)
	}
	defer s.end()
	p, err := s.exchange([]byte("g"), false)
	if err != nil {
		t.Fatal(err)
	}
	if len(p) < 16*8 {
		t.Fatalf("g answered %q", p)
	}
	return string(p[15*8 : 16*8])
}

func TestQEMU(t *testing.T) {
	g := startQEMU(t, false)
	g.prompt()
	s := dialQEMU(t, g.gdbAddr)
	ctx := testCtx(t)

	// Attaching stopped the guest; the session found it was running and
	// left it so.
	if !s.WasRunning() {
		t.Error("WasRunning is false for a guest that ran")
	}
	g.answers()

	// The device tree QEMU puts at the start of RAM.
	v, err := s.ReadMemory(ctx, 0x40000000, 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	if v[0] != 0xedfe0dd0 { // d0 0d fe ed: the FDT magic, big-endian
		t.Errorf("0x40000000 holds 0x%08x, want the FDT magic", v[0])
	}
	if !s.LastAccessHalted() {
		t.Error("LastAccessHalted is false after reading a running guest")
	}
	g.answers()

	// U-Boot's own code, in the flash QEMU loaded it into.
	want, err := os.ReadFile(ubootBin)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.ReadMemory(ctx, 0, 8, 5000)
	if err != nil {
		t.Fatal(err)
	}
	for i, b := range got {
		if byte(b) != want[i] {
			t.Fatalf("flash byte 0x%x is 0x%02x, u-boot.bin has 0x%02x", i, b, want[i])
		}
	}

	// Writes, every width, read back; RAM U-Boot does not use.
	base := uint64(0x44000000)
	for _, width := range []int{8, 16, 32, 64} {
		vals := []uint64{0x0123456789abcdef, 0x2324257d2a000000, 0}
		for i := range vals {
			if width < 64 {
				vals[i] &= 1<<width - 1
			}
		}
		addr := base + uint64(width)*16
		if err := s.WriteMemory(ctx, addr, width, vals); err != nil {
			t.Fatal(err)
		}
		back, err := s.ReadMemory(ctx, addr, width, len(vals))
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(back) != fmt.Sprint(vals) {
			t.Errorf("%d-bit: read back %x, wrote %x", width, back, vals)
		}
	}
	// Byte order: a 32-bit write read back as bytes.
	if err := s.WriteMemory(ctx, base, 32, []uint64{0x11223344}); err != nil {
		t.Fatal(err)
	}
	if b, _ := s.ReadMemory(ctx, base, 8, 4); fmt.Sprint(b) != fmt.Sprint([]uint64{0x44, 0x33, 0x22, 0x11}) {
		t.Errorf("0x11223344 is stored as %x", b)
	}

	// An image loaded into RAM and verified by reading it back.
	img := filepath.Join(t.TempDir(), "blob.bin")
	blob := bytes.Repeat([]byte("hilrun $#}* "), 1000)
	if err := os.WriteFile(img, blob, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadImage(ctx, img, 0x45000000); err != nil {
		t.Fatal(err)
	}
	if err := s.VerifyImage(ctx, img, 0x45000000); err != nil {
		t.Errorf("VerifyImage after LoadImage: %v", err)
	}
	if err := s.WriteMemory(ctx, 0x45000000+5000, 8, []uint64{0}); err != nil {
		t.Fatal(err)
	}
	if err := s.VerifyImage(ctx, img, 0x45000000); !errors.As(err, new(*VerifyError)) || !strings.Contains(err.Error(), "0x45001388: 0x00 instead of") {
		t.Errorf("VerifyImage of a changed byte: %v", err)
	}

	// A fault, in QEMU's words.
	_, err = s.ReadMemory(ctx, 0xfffffff0, 32, 1)
	if err == nil || !strings.HasSuffix(err.Error(), "reading 4 bytes at 0xfffffff0: the target refused (E14)") {
		t.Errorf("read of unmapped memory: %v", err)
	}
	g.answers()

	// Halt stops the guest: its program counter stands still while the
	// console receives a command, which it runs once resumed.
	if err := s.Halt(ctx); err != nil {
		t.Fatal(err)
	}
	pc1 := s.pc(t)
	from := len(g.out.String())
	g.send("printenv arch\n")
	if pc2 := s.pc(t); pc1 != pc2 {
		t.Errorf("pc moved from %s to %s while halted", pc1, pc2)
	}
	if _, err := s.ReadMemory(ctx, 0x40000000, 32, 1); err != nil || s.LastAccessHalted() {
		t.Errorf("read of a halted guest: %v, LastAccessHalted %v", err, s.LastAccessHalted())
	}
	if err := s.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	g.expect(from, "arch=arm")

	out, err := s.Command(ctx, "info status")
	if err != nil || !strings.Contains(out, "VM status: paused") {
		t.Errorf("monitor info status: %q, %v", out, err)
	}
	g.answers()

	// Reset run: U-Boot starts again.
	from = len(g.out.String())
	if err := s.Reset(ctx, "run"); err != nil {
		t.Fatal(err)
	}
	g.expect(from, "U-Boot 20")
	g.expect(from, "Hit any key to stop autoboot")
	g.send("\n")
	g.expect(from, "=> ")

	// Reset halt: the CPU waits at the reset vector, flash address 0,
	// until resumed.
	if err := s.Reset(ctx, "halt"); err != nil {
		t.Fatal(err)
	}
	if pc := s.pc(t); pc != "00000000" {
		t.Errorf("pc after reset halt is %s, want the reset vector", pc)
	}
	from = len(g.out.String())
	if err := s.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	g.expect(from, "Hit any key to stop autoboot")
	g.send("\n")
	g.expect(from, "=> ")

	// Close leaves it running: it answers, and a new session finds it
	// running.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	g.answers()
	s2 := dialQEMU(t, g.gdbAddr)
	if !s2.WasRunning() {
		t.Error("the guest did not run after Close")
	}
	g.answers()
}

func TestQEMUPaused(t *testing.T) {
	// QEMU -S: the guest waits at its first instruction. Attaching finds
	// it halted, and Close leaves it so.
	g := startQEMU(t, true)
	s := dialQEMU(t, g.gdbAddr)
	ctx := testCtx(t)
	if s.WasRunning() {
		t.Error("WasRunning is true for a guest started with -S")
	}
	got, err := s.ReadMemory(ctx, 0, 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := os.ReadFile(ubootBin)
	if len(want) < 4 || !bytes.Equal([]byte{byte(got[0]), byte(got[0] >> 8), byte(got[0] >> 16), byte(got[0] >> 24)}, want[:4]) {
		t.Errorf("first word 0x%08x is not u-boot.bin's", got[0])
	}
	if s.LastAccessHalted() {
		t.Error("LastAccessHalted for a halted guest")
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := dialQEMU(t, g.gdbAddr)
	if s2.WasRunning() {
		t.Error("Close set a halted guest running")
	}
	// Resume then starts U-Boot.
	if err := s2.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	g.expect(0, "U-Boot 20")
}

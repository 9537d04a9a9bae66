//go:build linux

package gdbremote

import (
	"errors"
	"strings"
	"testing"

	"github.com/creack/pty"
)

// serveOnPty serves stub on a pty, the way a Black Magic Probe's GDB port
// is a serial device, and returns the device's path.
func serveOnPty(t *testing.T, stub *simStub) string {
	t.Helper()
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		stub.serve(master)
	}()
	t.Cleanup(func() {
		tty.Close()
		master.Close()
		<-done
	})
	return tty.Name()
}

func TestBlackMagicProbeOverSerial(t *testing.T) {
	stub := newSimStub(t, func(s *simStub) {
		s.bmp, s.noAck, s.vCont, s.packetSize = true, false, false, 0x400
	})
	path := serveOnPty(t, stub)
	sess, err := Dial(testCtx(t), path, gates(Options{}))
	if err != nil {
		t.Fatalf("Dial %s: %v", path, err)
	}
	defer sess.Close()
	ctx := testCtx(t)
	if err := sess.WriteMemory(ctx, 0x20000010, 32, []uint64{0xcafef00d, 0x23242a7d}); err != nil {
		t.Fatal(err)
	}
	v, err := sess.ReadMemory(ctx, 0x20000010, 32, 2)
	if err != nil || v[0] != 0xcafef00d || v[1] != 0x23242a7d {
		t.Fatalf("read back %x, %v", v, err)
	}
	// Enough to need several packets over the port.
	if _, err := sess.ReadMemory(ctx, 0x20000000, 8, 3000); err != nil {
		t.Fatal(err)
	}
	out, err := sess.Command(ctx, "swdp_scan")
	if err != nil || !strings.Contains(out, "Simulated Cortex-M3") {
		t.Errorf("monitor swdp_scan: %q, %v", out, err)
	}
	got := strings.Join(stub.received(), "\n")
	for _, want := range []string{"qRcmd," + "737764705f7363616e", "vAttach;1"} {
		if !strings.Contains(got, want) {
			t.Errorf("the session sent no %s; it sent:\n%s", want, got)
		}
	}
	if err := sess.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	if err := sess.Close(); err != nil {
		t.Fatal(err)
	}
	if !stub.waitRunning(t, true) || !stub.detached() {
		t.Error("Close did not detach, leaving the resumed target running")
	}
}

func TestNoTargetToAttach(t *testing.T) {
	stub := newSimStub(t, func(s *simStub) { s.bmp = true })
	_, err := Dial(testCtx(t), stub.addr(), gates(Options{ScanCommand: "-"}))
	if err == nil || !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "refused to attach target 1 (E01)") {
		t.Fatalf("Dial with no target found: %v", err)
	}
}

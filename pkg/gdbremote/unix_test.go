package gdbremote

import (
	"io"
	"net"
	"path/filepath"
	"sync"
	"testing"
)

// A stub on a Unix socket (as hilrun launches QEMU's) is dialled by its
// path, and the session reads and writes memory through it.
func TestDialUnixSocket(t *testing.T) {
	s := newSimStub(t)
	path := filepath.Join(t.TempDir(), "gdb")
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	// The socket forwards to the simulated stub.
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", s.addr())
			if err != nil {
				c.Close()
				return
			}
			wg.Go(func() { io.Copy(up, c); up.Close() })
			wg.Go(func() { io.Copy(c, up); c.Close() })
		}
	})
	if !isUnixSocket(path) {
		t.Fatalf("%s is not taken for a Unix socket", path)
	}
	sess, err := Dial(testCtx(t), path, gates(Options{}))
	if err != nil {
		t.Fatalf("Dial %s: %v", path, err)
	}
	defer sess.Close()
	ctx := testCtx(t)
	if err := sess.WriteMemory(ctx, 0x20000100, 32, []uint64{0xdeadbeef}); err != nil {
		t.Fatal(err)
	}
	got, err := sess.ReadMemory(ctx, 0x20000100, 32, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0] != 0xdeadbeef {
		t.Errorf("read %x, want deadbeef", got)
	}
}

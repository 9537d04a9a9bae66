package qemu

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/internal/testenv"
)

// A port taken between choosing it and QEMU binding it makes QEMU exit
// saying so; Start then tries another.
func TestPortTakenIsRetried(t *testing.T) {
	testenv.NeedTool(t, DefaultBinary, "apt-get install qemu-system-arm")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().(*net.TCPAddr).Port

	var tried []int
	ports := func() (int, error) {
		p := taken
		if len(tried) > 0 {
			var err error
			if p, err = freePort(); err != nil {
				return 0, err
			}
		}
		tried = append(tried, p)
		return p, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	in, err := startWith(ctx, Spec{Machine: "virt"}, ports)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close(ctx)
	if len(tried) != 2 || tried[0] != taken {
		t.Errorf("ports tried %v, want %d and then another", tried, taken)
	}
	if strings.HasSuffix(in.GDBAddr(), ":"+strconv.Itoa(taken)) {
		t.Errorf("gdb server at %s, the taken port", in.GDBAddr())
	}
}

// Every attempt failing ends with QEMU's words.
func TestPortAlwaysTaken(t *testing.T) {
	testenv.NeedTool(t, DefaultBinary, "apt-get install qemu-system-arm")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	taken := ln.Addr().(*net.TCPAddr).Port
	n := 0
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	_, err = startWith(ctx, Spec{Machine: "virt"}, func() (int, error) { n++; return taken, nil })
	if err == nil || !strings.Contains(err.Error(), "Address already in use") {
		t.Errorf("error %v, want QEMU's bind failure", err)
	}
	if n != 3 {
		t.Errorf("%d attempts, want 3", n)
	}
}

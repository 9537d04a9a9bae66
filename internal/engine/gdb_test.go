package engine

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
)

// A GDB probe's attach mode reaches the session: running resumes the
// target after attaching and detaches at the end, so a stub that stopped
// the program without a stop reply (gdbserver --attach) leaves it
// running; halted and auto leave it as the attach left it.
func TestGDBAttachModes(t *testing.T) {
	for _, tc := range []struct {
		mode string
		want []string // packets after the handshake's ?
	}{
		{steps.GDBAttachRunning, []string{"vCont?", "vCont;c", "\x03", "D"}},
		{steps.GDBAttachHalted, nil},
		{steps.GDBAttachAuto, nil},
		{"", nil},
	} {
		t.Run(fmt.Sprintf("%q", tc.mode), func(t *testing.T) {
			stub := startQuietStub(t)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			d, err := openGDB(ctx, &steps.Probe{Name: "q", GDB: stub.addr, GDBAttach: tc.mode}, ProbeOptions{Gates: hostGates})
			if err != nil {
				t.Fatal(err)
			}
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
			got := stub.after("?")
			if !slices.Equal(got, tc.want) {
				t.Errorf("after ?, the stub got %q, want %q", got, tc.want)
			}
		})
	}
}

// quietStub answers as gdbserver --attach does: the target is stopped,
// and nothing says the attach stopped it.
type quietStub struct {
	addr    string
	mu      sync.Mutex
	packets []string
	done    chan struct{}
}

func startQuietStub(t *testing.T) *quietStub {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &quietStub{addr: l.Addr().String(), done: make(chan struct{})}
	t.Cleanup(func() {
		l.Close()
		<-s.done
	})
	go func() {
		defer close(s.done)
		c, err := l.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		s.serve(c)
	}()
	return s
}

func (s *quietStub) serve(c net.Conn) {
	r := bufio.NewReader(c)
	reply := func(p string) {
		sum := 0
		for i := range len(p) {
			sum += int(p[i])
		}
		fmt.Fprintf(c, "+$%s#%02x", p, sum&0xff)
	}
	for {
		b, err := r.ReadByte()
		if err != nil {
			return
		}
		switch b {
		case 0x03:
			s.got("\x03")
			reply("T02thread:01;")
		case '$':
			p, err := r.ReadString('#')
			if err != nil {
				return
			}
			if _, err := r.Discard(2); err != nil {
				return
			}
			p = strings.TrimSuffix(p, "#")
			s.got(p)
			switch {
			case strings.HasPrefix(p, "qSupported"):
				reply("PacketSize=400")
			case p == "?":
				reply("T05thread:01;")
			case p == "vCont?":
				reply("vCont;c;C;s;S")
			case p == "vCont;c":
				// Running: no reply until it stops.
			case p == "D":
				reply("OK")
			default:
				reply("")
			}
		}
	}
}

func (s *quietStub) got(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.packets = append(s.packets, p)
}

// after returns the packets received after the first p, once the
// connection has ended.
func (s *quietStub) after(p string) []string {
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	i := slices.Index(s.packets, p)
	if i < 0 {
		return nil
	}
	return slices.Clone(s.packets[i+1:])
}

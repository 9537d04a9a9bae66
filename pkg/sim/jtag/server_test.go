package jtag

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/sim"
)

// ioTimeout only keeps a broken test from hanging.
const ioTimeout = 10 * time.Second

// bitbang builds remote_bitbang command strings the way OpenOCD's driver
// sends them: per TCK cycle, TCK low with TMS/TDI, optionally 'R', then TCK
// high.
type bitbang struct{ strings.Builder }

func (b *bitbang) clock(tms, tdi, sample bool) {
	v := byte('0')
	if tms {
		v += 2
	}
	if tdi {
		v++
	}
	b.WriteByte(v)
	if sample {
		b.WriteByte('R')
	}
	b.WriteByte(v + 4)
}

func (b *bitbang) tms(levels ...int) {
	for _, l := range levels {
		b.clock(l != 0, false, false)
	}
}

// readIDCODE resets the TAP and samples the 32 bits of IDCODE.
func (b *bitbang) readIDCODE() {
	b.tms(1, 1, 1, 1, 1, 0, 1, 0, 0) // Test-Logic-Reset, Idle, Shift-DR
	for i := range 32 {
		b.clock(i == 31, false, true)
	}
	b.tms(1, 0) // Update-DR, Idle
}

// idcodeReply is what readIDCODE's samples come back as: IDCODE LSB first.
func idcodeReply() string {
	var s strings.Builder
	for i := range 32 {
		s.WriteByte('0' + byte(IDCODE>>i&1))
	}
	return s.String()
}

func serve(t *testing.T) (*Server, *sim.Memory) {
	t.Helper()
	mem := sim.NewMemory()
	s, err := Serve(context.Background(), mem, "127.0.0.1:0")
	if err != nil {
		t.Fatalf("serve: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s, mem
}

type bbConn struct {
	t *testing.T
	c net.Conn
	r *bufio.Reader
}

func dialBB(t *testing.T, s *Server) *bbConn {
	t.Helper()
	c, err := net.DialTimeout("tcp", s.Addr(), ioTimeout)
	if err != nil {
		t.Fatalf("dial %s: %v", s.Addr(), err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(ioTimeout))
	return &bbConn{t: t, c: c, r: bufio.NewReader(c)}
}

func (b *bbConn) send(s string) {
	b.t.Helper()
	if _, err := io.WriteString(b.c, s); err != nil {
		b.t.Fatalf("send: %v", err)
	}
}

// recv reads exactly n reply bytes.
func (b *bbConn) recv(n int) string {
	b.t.Helper()
	p := make([]byte, n)
	if _, err := io.ReadFull(b.r, p); err != nil {
		b.t.Fatalf("read %d reply bytes: %v (got %q)", n, err, p)
	}
	return string(p)
}

// closedByServer reports whether the server closed the connection: a read
// returns EOF (or a reset) rather than timing out.
func (b *bbConn) closedByServer() bool {
	b.c.SetReadDeadline(time.Now().Add(ioTimeout))
	_, err := b.r.ReadByte()
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

func TestServeReadsIDCODE(t *testing.T) {
	s, _ := serve(t)
	c := dialBB(t, s)
	var b bitbang
	b.readIDCODE()
	// The reply must come while the connection stays open: the server
	// flushes once it has run out of input.
	c.send(b.String())
	if got, want := c.recv(32), idcodeReply(); got != want {
		t.Errorf("IDCODE bits = %s, want %s", got, want)
	}
	st := s.Stats()
	if st.Reads != 32 || st.DRScans != 1 || st.Connections != 1 {
		t.Errorf("stats = %+v, want 32 reads, 1 DR scan, 1 connection", st)
	}
}

// A batch split across many small writes gives the same answer: the
// server must not depend on how TCP segments arrive.
func TestServeByteAtATime(t *testing.T) {
	s, _ := serve(t)
	c := dialBB(t, s)
	var b bitbang
	b.readIDCODE()
	var got strings.Builder
	for _, ch := range []byte(b.String()) {
		c.send(string(ch))
		if ch == 'R' {
			got.WriteString(c.recv(1))
		}
	}
	if got.String() != idcodeReply() {
		t.Errorf("IDCODE bits = %s, want %s", got.String(), idcodeReply())
	}
}

func TestServeCommands(t *testing.T) {
	tests := []struct {
		name  string
		send  string
		reply string
		check func(t *testing.T, st Stats, mem *sim.Memory)
	}{
		{name: "blink is silent", send: "BbBbR", reply: "0",
			check: func(t *testing.T, st Stats, _ *sim.Memory) {
				if st.Blinks != 2 {
					t.Errorf("blinks = %d, want 2", st.Blinks)
				}
			}},
		{name: "sleep and line ends are ignored", send: "Zz\r\n R", reply: "0"},
		{name: "SWDIO read answers high", send: "c", reply: "1"},
		{name: "SRST resets the board", send: "srsr", reply: "",
			check: func(t *testing.T, st Stats, mem *sim.Memory) {
				if st.SystemResets != 2 {
					t.Errorf("system resets = %d, want 2", st.SystemResets)
				}
				if v, _ := mem.Read(sim.BlinkAddr, 32); v != 0 {
					t.Errorf("blink flag = %d after SRST, want 0", v)
				}
			}},
		// Clocks that would reach Shift-DR (where TDO is IDCODE's bit 0,
		// a 1) do nothing while TRST is asserted.
		{name: "TRST holds the TAP in reset", send: "t" + "04" + "26" + "04" + "04" + "0R4" + "r", reply: "0",
			check: func(t *testing.T, st Stats, _ *sim.Memory) {
				if st.DRScans != 1 {
					t.Errorf("DR scans = %d, want only the IDCODE read", st.DRScans)
				}
			}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, mem := serve(t)
			mem.Write(sim.BlinkAddr, 32, 1)
			c := dialBB(t, s)
			// Everything is followed by an IDCODE read, whose reply proves
			// the commands before it were consumed without a reply of
			// their own beyond tt.reply.
			var b bitbang
			b.readIDCODE()
			c.send(tt.send + b.String())
			if got := c.recv(len(tt.reply) + 32); got != tt.reply+idcodeReply() {
				t.Errorf("reply = %q, want %q", got, tt.reply+idcodeReply())
			}
			if tt.check != nil {
				tt.check(t, s.Stats(), mem)
			}
		})
	}
}

func TestServeQuitAndReconnect(t *testing.T) {
	s, _ := serve(t)
	var b bitbang
	b.readIDCODE()

	c1 := dialBB(t, s)
	c1.send(b.String() + "Q")
	c1.recv(32)
	if !c1.closedByServer() {
		t.Fatal("connection still open after Q")
	}
	// The server is ready for the next client: the first connection's
	// goroutine may still be finishing, so allow it a moment.
	deadline := time.Now().Add(ioTimeout)
	for {
		c2 := dialBB(t, s)
		c2.send(b.String())
		c2.c.SetReadDeadline(time.Now().Add(ioTimeout))
		p := make([]byte, 32)
		if _, err := io.ReadFull(c2.r, p); err == nil {
			if string(p) != idcodeReply() {
				t.Errorf("second connection read %s", p)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("second connection never served")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if st := s.Stats(); st.Connections < 2 {
		t.Errorf("connections = %d, want 2", st.Connections)
	}
}

func TestServeRejectsSecondClient(t *testing.T) {
	s, _ := serve(t)
	var b bitbang
	b.readIDCODE()
	c1 := dialBB(t, s)
	c1.send(b.String())
	c1.recv(32) // c1 is being served

	c2 := dialBB(t, s)
	if !c2.closedByServer() {
		t.Fatal("second client not disconnected")
	}
	c1.send(b.String())
	if got := c1.recv(32); got != idcodeReply() {
		t.Errorf("first client after the rejection read %s", got)
	}
	if st := s.Stats(); st.Rejected != 1 || st.Connections != 1 {
		t.Errorf("stats = %+v, want 1 connection, 1 rejected", st)
	}
}

// The client disconnecting in the middle of a scan leaves a board a new
// client can use after resetting the TAP, with the debug port's state kept.
func TestServeStateSurvivesDisconnect(t *testing.T) {
	s, _ := serve(t)
	c1 := dialBB(t, s)
	var b bitbang
	b.tms(1, 1, 1, 1, 1, 0, 1, 0, 0, 0, 0) // into Shift-DR, mid-scan
	c1.send(b.String() + "R")
	c1.recv(1)
	c1.c.Close()

	deadline := time.Now().Add(ioTimeout)
	for s.Stats().Connections < 2 {
		c2 := dialBB(t, s)
		var b bitbang
		b.readIDCODE()
		c2.send(b.String())
		c2.c.SetReadDeadline(time.Now().Add(time.Second))
		p := make([]byte, 32)
		if _, err := io.ReadFull(c2.r, p); err == nil {
			if string(p) != idcodeReply() {
				t.Errorf("IDCODE after reconnect = %s", p)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no second connection served")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestServeClose(t *testing.T) {
	s, _ := serve(t)
	c := dialBB(t, s)
	var b bitbang
	b.readIDCODE()
	c.send(b.String())
	c.recv(32)

	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	if !c.closedByServer() {
		t.Error("client connection open after Close")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second close: %v", err)
	}
	if c, err := net.DialTimeout("tcp", s.Addr(), time.Second); err == nil {
		c.Close()
		t.Error("server still accepts after Close")
	}
}

func TestServeStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := Serve(ctx, sim.NewMemory(), "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := dialBB(t, s)
	cancel()
	if !c.closedByServer() {
		t.Error("client connection open after the context ended")
	}
	if err := s.Close(); err != nil {
		t.Errorf("close after cancel: %v", err)
	}
}

func TestServeErrors(t *testing.T) {
	tests := []struct {
		name string
		mem  *sim.Memory
		addr string
		want string
	}{
		{"no memory", nil, "127.0.0.1:0", "serve jtag: no memory"},
		{"bad address", sim.NewMemory(), "127.0.0.1:notaport", "serve jtag: listen tcp"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := Serve(context.Background(), tt.mem, tt.addr)
			if err == nil {
				s.Close()
				t.Fatal("Serve succeeded")
			}
			if s != nil {
				t.Error("Serve returned a server with its error")
			}
			if !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("error %q, want prefix %q", err, tt.want)
			}
		})
	}
}

func TestOpenOCDConfig(t *testing.T) {
	tests := []struct {
		name string
		addr string
		want []string
		not  []string
	}{
		{"IPv4", "127.0.0.1:3335", []string{
			"adapter driver remote_bitbang\n",
			"remote_bitbang host 127.0.0.1\n",
			"remote_bitbang port 3335\n",
			"transport select jtag\n",
			"jtag newtap sim cpu -irlen 4 -expected-id 0x4ba00477\n",
			"dap create sim.dap -chain-position sim.cpu\n",
			"target create sim.mem mem_ap -dap sim.dap -ap-num 0\n",
			"sim.mem configure -event examine-end {sim.dap memaccess 0}\n",
			"gdb_port disabled\n",
			"tcl_port disabled\n",
		}, []string{"telnet_port", "error"}},
		{"IPv6", "[::1]:3335", []string{"remote_bitbang host ::1\n", "remote_bitbang port 3335\n"}, nil},
		{"no host", ":3335", []string{"remote_bitbang host localhost\n"}, nil},
		{"no port", "127.0.0.1", []string{`error "hilrun: remote_bitbang address \"127.0.0.1\": want host:port`},
			[]string{"adapter driver"}},
		{"port 0", "127.0.0.1:0", []string{`error "hilrun: remote_bitbang address \"127.0.0.1:0\"`}, []string{"adapter driver"}},
		{"Tcl specials", "a$b:1", []string{`remote_bitbang host "a\$b"` + "\n"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := OpenOCDConfig(tt.addr)
			for _, w := range tt.want {
				if !strings.Contains(cfg, w) {
					t.Errorf("config lacks %q:\n%s", w, cfg)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(cfg, n) {
					t.Errorf("config has %q:\n%s", n, cfg)
				}
			}
		})
	}
}

package serialx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/stream"
)

// rfc2217Peer is a small RFC 2217 access server for tests: it accepts
// telnet option requests for BINARY, SGA and COM-PORT-OPTION, asks the
// client for ECHO (which the client must refuse), acknowledges every com
// port command with the value asked for (or, for SET-CONTROL values in
// deny, does not answer), records the commands, and echoes the data it
// receives back, IAC doubled. It implements the server side of the
// protocol independently of the client it tests.
type rfc2217Peer struct {
	t  *testing.T
	ln net.Listener

	mu       sync.Mutex
	commands []string // "SET-CONTROL 8", "SET-BAUDRATE 9600"
	refused  []string // "WONT 1": what the client refused
	data     bytes.Buffer
	conns    []net.Conn
	deny     map[byte]bool
	noBinary bool // refuse BINARY both ways
	changed  chan struct{}
}

func newRFC2217Peer(t *testing.T) *rfc2217Peer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &rfc2217Peer{t: t, ln: ln, deny: map[byte]bool{}, changed: make(chan struct{}, 1)}
	go p.accept()
	t.Cleanup(func() { p.close() })
	return p
}

func (p *rfc2217Peer) url() string { return "rfc2217://" + p.ln.Addr().String() }

func (p *rfc2217Peer) close() {
	p.ln.Close()
	p.dropConns()
}

// send writes raw bytes to every connection, telnet commands included.
func (p *rfc2217Peer) send(raw []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Write(raw)
	}
}

// dropConns closes the connections, as a server that restarts does.
func (p *rfc2217Peer) dropConns() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

func (p *rfc2217Peer) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.conns = append(p.conns, c)
		p.mu.Unlock()
		go p.serve(c)
	}
}

func (p *rfc2217Peer) note(f func()) {
	p.mu.Lock()
	f()
	p.mu.Unlock()
	select {
	case p.changed <- struct{}{}:
	default:
	}
}

// waitFor waits up to 20 s for cond, checked after every change.
func (p *rfc2217Peer) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		p.mu.Lock()
		ok := cond()
		p.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-p.changed:
		case <-deadline:
			p.mu.Lock()
			defer p.mu.Unlock()
			t.Fatalf("timed out waiting for %s; commands %q, data %q", what, p.commands, p.data.Bytes())
		}
	}
}

func (p *rfc2217Peer) serve(c net.Conn) {
	// Ask the client to echo: it must refuse.
	c.Write([]byte{tnIAC, tnDO, 1})
	buf := make([]byte, 4096)
	var state int
	var verb byte
	var sb []byte
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		var out, echo []byte
		for _, b := range buf[:n] {
			switch state {
			case 0:
				if b == tnIAC {
					state = 1
				} else {
					echo = append(echo, b)
				}
			case 1:
				switch b {
				case tnIAC:
					echo = append(echo, tnIAC)
					state = 0
				case tnWILL, tnWONT, tnDO, tnDONT:
					verb, state = b, 2
				case tnSB:
					sb, state = sb[:0], 3
				default:
					state = 0
				}
			case 2:
				state = 0
				switch verb {
				case tnWILL: // the client offers: we take BINARY, SGA, COM-PORT
					if (b == optBinary && !p.noBinary) || b == optSGA || b == optComPort {
						out = append(out, tnIAC, tnDO, b)
					} else {
						out = append(out, tnIAC, tnDONT, b)
					}
				case tnDO:
					if (b == optBinary && !p.noBinary) || b == optSGA {
						out = append(out, tnIAC, tnWILL, b)
					} else {
						out = append(out, tnIAC, tnWONT, b)
					}
				case tnWONT:
					p.note(func() { p.refused = append(p.refused, fmt.Sprintf("WONT %d", b)) })
				}
			case 3:
				if b == tnIAC {
					state = 4
				} else {
					sb = append(sb, b)
				}
			case 4:
				if b == tnIAC {
					sb = append(sb, tnIAC)
					state = 3
					continue
				}
				state = 0
				if len(sb) >= 2 && sb[0] == optComPort {
					cmd, val := sb[1], sb[2:]
					p.note(func() { p.commands = append(p.commands, describeCommand(cmd, val)) })
					if cmd == cpSetControl && len(val) == 1 && p.deny[val[0]] {
						continue
					}
					out = append(out, tnIAC, tnSB, optComPort, cmd+cpServerReplies)
					for _, v := range val {
						if v == tnIAC {
							out = append(out, tnIAC)
						}
						out = append(out, v)
					}
					out = append(out, tnIAC, tnSE)
				}
			}
		}
		if len(echo) > 0 {
			p.note(func() { p.data.Write(echo) })
			out = append(out, bytes.ReplaceAll(echo, []byte{tnIAC}, []byte{tnIAC, tnIAC})...)
		}
		if len(out) > 0 {
			if _, err := c.Write(out); err != nil {
				return
			}
		}
	}
}

func describeCommand(cmd byte, val []byte) string {
	if cmd == cpSetBaud && len(val) == 4 {
		return fmt.Sprintf("SET-BAUDRATE %d", uint32(val[0])<<24|uint32(val[1])<<16|uint32(val[2])<<8|uint32(val[3]))
	}
	s := commandName(cmd)
	for _, v := range val {
		s += fmt.Sprintf(" %d", v)
	}
	return s
}

func (p *rfc2217Peer) hasCommands(want ...string) bool {
	got := strings.Join(p.commands, ", ")
	return strings.Contains(got, strings.Join(want, ", "))
}

func openNet(t *testing.T, cfg Config) *Console {
	t.Helper()
	c, err := Open(timeout(t, 20*time.Second), "dut", cfg)
	if err != nil {
		t.Fatalf("Open %s: %v", cfg.Path, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// allBytes is every byte value, 0xff (IAC) twice and a CR NUL pair among
// them.
func allBytes() []byte {
	p := make([]byte, 0, 260)
	for i := range 256 {
		p = append(p, byte(i))
	}
	return append(p, tnIAC, tnIAC, '\r', 0)
}

func TestRFC2217Peer(t *testing.T) {
	peer := newRFC2217Peer(t)
	c := openNet(t, Config{Devices: anyDevice, Dial: anyAddr, Path: peer.url(), Baud: 9600, DataBits: 7, Parity: "even", StopBits: "2", FlowControl: "rtscts", DTR: new(false), NoLock: true})

	t.Run("settings at open", func(t *testing.T) {
		peer.waitFor(t, "the line settings", func() bool {
			return peer.hasCommands("SET-BAUDRATE 9600", "SET-DATASIZE 7", "SET-PARITY 3", "SET-STOPSIZE 2", "SET-CONTROL 9", "SET-CONTROL 3")
		})
		peer.waitFor(t, "ECHO refused", func() bool { return len(peer.refused) > 0 })
		if got := strings.Join(peer.refused, ","); got != "WONT 1" {
			t.Errorf("the client refused %s, want only WONT 1 (ECHO)", got)
		}
	})

	t.Run("binary both ways", func(t *testing.T) {
		data := allBytes()
		cur, err := c.Write(timeout(t, 20*time.Second), data)
		if err != nil {
			t.Fatal(err)
		}
		peer.waitFor(t, "the data", func() bool { return peer.data.Len() >= len(data) })
		if got := peer.data.Bytes(); !bytes.Equal(got, data) {
			t.Errorf("the server received\n%q\nwant\n%q", got, data)
		}
		if _, err := c.Expect(timeout(t, 20*time.Second), cur, []stream.Pattern{stream.Literal(string(data))}, nil); err != nil {
			t.Errorf("the echo did not come back intact: %v; got %q", err, c.Tail(10, 1000))
		}
	})

	t.Run("modem control", func(t *testing.T) {
		ctx := timeout(t, 20*time.Second)
		if err := c.SetLines(ctx, new(true), new(false)); err != nil {
			t.Fatal(err)
		}
		if err := c.Break(ctx, 10*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := c.ResetSequence(ctx, "esp32_run"); err != nil {
			t.Fatal(err)
		}
		peer.waitFor(t, "the modem commands", func() bool {
			return peer.hasCommands("SET-CONTROL 8", "SET-CONTROL 12", "SET-CONTROL 5", "SET-CONTROL 6", "SET-CONTROL 9", "SET-CONTROL 11", "SET-CONTROL 12")
		})
	})

	t.Run("purge", func(t *testing.T) {
		c.mu.RLock()
		p := c.port.(*netPort)
		c.mu.RUnlock()
		if err := p.ResetInputBuffer(); err != nil {
			t.Fatal(err)
		}
		peer.waitFor(t, "PURGE-DATA", func() bool { return peer.hasCommands("PURGE-DATA 1") })
	})

	t.Run("unanswered command", func(t *testing.T) {
		peer.mu.Lock()
		peer.deny[ctlDTROn] = true
		peer.mu.Unlock()
		err := c.SetLines(timeout(t, 20*time.Second), new(true), nil)
		if err == nil || !strings.Contains(err.Error(), "did not acknowledge SET-CONTROL") {
			t.Errorf("SetLines = %v, want an error saying the server did not acknowledge", err)
		}
	})
}

// TestTelnetWithoutBinary checks the NVT rule for a server that refuses
// BINARY: a CR goes out as CR NUL, and CR NUL comes back as CR.
func TestTelnetWithoutBinary(t *testing.T) {
	peer := newRFC2217Peer(t)
	peer.noBinary = true
	c := openNet(t, Config{Devices: anyDevice, Dial: anyAddr, Path: peer.url(), NoLock: true})
	cur, err := c.Write(timeout(t, 20*time.Second), []byte("x\ry\xff"))
	if err != nil {
		t.Fatal(err)
	}
	peer.waitFor(t, "the data", func() bool { return peer.data.Len() >= 5 })
	if got := peer.data.String(); got != "x\r\x00y\xff" {
		t.Errorf("the server received %q, want CR as CR NUL", got)
	}
	// The peer echoes CR NUL back as it received it.
	if _, err := c.Expect(timeout(t, 20*time.Second), cur, lit("x\ry\xff"), nil); err != nil {
		t.Errorf("the echo did not come back with a bare CR: %v; got %q", err, c.Tail(10, 100))
	}
}

// TestRFC2217FlowSuspend checks that the server's FLOWCONTROL-SUSPEND
// holds writes until FLOWCONTROL-RESUME, and that closing the console
// while a write is held does not hang.
func TestRFC2217FlowSuspend(t *testing.T) {
	peer := newRFC2217Peer(t)
	c := openNet(t, Config{Devices: anyDevice, Dial: anyAddr, Path: peer.url(), NoLock: true})
	suspend := []byte{tnIAC, tnSB, optComPort, cpServerReplies + cpFlowSuspend, tnIAC, tnSE}
	resume := []byte{tnIAC, tnSB, optComPort, cpServerReplies + cpFlowResume, tnIAC, tnSE}
	// The marker after the command shows the client has read it.
	peer.send(append(suspend, "suspended\n"...))
	if _, err := c.Expect(timeout(t, 20*time.Second), 0, lit("suspended\n"), nil); err != nil {
		t.Fatal(err)
	}
	wrote := make(chan error, 1)
	go func() {
		_, err := c.Write(timeout(t, 20*time.Second), []byte("held"))
		wrote <- err
	}()
	peer.mu.Lock()
	early := strings.Contains(peer.data.String(), "held")
	peer.mu.Unlock()
	if early {
		t.Fatal("the write went out while the server had suspended output")
	}
	peer.send(resume)
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	peer.waitFor(t, "the held write", func() bool { return strings.Contains(peer.data.String(), "held") })

	peer.send(append(suspend, "again\n"...))
	if _, err := c.Expect(timeout(t, 20*time.Second), 0, lit("again\n"), nil); err != nil {
		t.Fatal(err)
	}
	go func() {
		_, err := c.Write(timeout(t, 20*time.Second), []byte("never"))
		wrote <- err
	}()
	// Close must not wait for a resume that never comes.
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err == nil {
		t.Error("a write held by the server succeeded after Close")
	}
}

func TestRFC2217Reconnect(t *testing.T) {
	peer := newRFC2217Peer(t)
	c := openNet(t, Config{Devices: anyDevice, Dial: anyAddr, Path: peer.url(), Reconnect: true, NoLock: true})
	peer.waitFor(t, "the first connection's settings", func() bool { return peer.hasCommands("SET-CONTROL 1") })
	peer.dropConns()
	eventually(t, "the reconnection", func() bool { return c.Stats().Reconnects == 1 })
	cur, err := c.Write(timeout(t, 20*time.Second), []byte("again\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(timeout(t, 20*time.Second), cur, lit("again\n"), nil); err != nil {
		t.Fatal(err)
	}
}

func TestRFC2217Refused(t *testing.T) {
	// A plain TCP server does not speak telnet: it echoes the option
	// requests as data and never agrees to COM-PORT-OPTION.
	ln := echoServer(t)
	_, err := Open(timeout(t, 30*time.Second), "dut", Config{Devices: anyDevice, Dial: anyAddr, Path: "rfc2217://" + ln.Addr().String(), NoLock: true})
	var oe *OpenError
	if !errors.As(err, &oe) {
		t.Fatalf("Open = %v, want an *OpenError", err)
	}
	if !strings.Contains(err.Error(), "rfc2217://") {
		t.Errorf("the error %q does not name the port", err)
	}
}

// echoServer is a plain TCP server, standing in for a raw serial port,
// that echoes what it receives.
func echoServer(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			go io.Copy(c, c)
		}
	}()
	return ln
}

func TestRawSocket(t *testing.T) {
	ln := echoServer(t)
	url := "tcp://" + ln.Addr().String()
	var warnings []string
	c := openNet(t, Config{Devices: anyDevice, Dial: anyAddr, Path: url, Baud: 9600, NoLock: true, Warn: func(m string) { warnings = append(warnings, m) }})
	if len(warnings) != 1 || !strings.Contains(warnings[0], "is a raw socket: baud rate") {
		t.Errorf("warnings %q, want one about the line settings of a raw socket", warnings)
	}

	data := allBytes()
	cur, err := c.Write(timeout(t, 20*time.Second), data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Expect(timeout(t, 20*time.Second), cur, []stream.Pattern{stream.Literal(string(data))}, nil); err != nil {
		t.Errorf("binary data did not come back intact: %v", err)
	}

	want := url + " is a raw socket: it has no modem lines; use rfc2217://"
	for name, op := range map[string]func() error{
		"lines": func() error { return c.SetLines(t.Context(), new(true), nil) },
		"break": func() error { return c.Break(t.Context(), time.Millisecond) },
		"reset": func() error { return c.ResetSequence(t.Context(), "esp32") },
	} {
		err := op()
		if !errors.Is(err, ErrNoModemLines) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s = %v, want an error wrapping ErrNoModemLines saying %q", name, err, want)
		}
	}

	for name, cfg := range map[string]Config{
		"dtr":  {Dial: anyAddr, Path: url, DTR: new(true), NoLock: true},
		"flow": {Dial: anyAddr, Path: url, FlowControl: "rtscts", NoLock: true},
	} {
		_, err := Open(timeout(t, 20*time.Second), "dut", cfg)
		var oe *OpenError
		if !errors.As(err, &oe) || oe.Kind != Invalid || !strings.Contains(err.Error(), "is a raw socket") {
			t.Errorf("Open with %s = %v, want an Invalid *OpenError about the raw socket", name, err)
		}
	}
}

func TestNetOpenErrors(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	_, err = Open(timeout(t, 20*time.Second), "dut", Config{Devices: anyDevice, Dial: anyAddr, Path: "tcp://" + addr})
	if err == nil || !strings.Contains(err.Error(), "open tcp://"+addr+": connect to "+addr) {
		t.Errorf("Open = %v, want a connection error naming the URL once", err)
	}
	_, err = Open(timeout(t, 20*time.Second), "dut", Config{Devices: anyDevice, Dial: anyAddr, Path: "tcp://nowhere"})
	if err == nil || !strings.Contains(err.Error(), "want tcp://HOST:PORT") {
		t.Errorf("Open = %v, want the URL's form", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Open(ctx, "dut", Config{Devices: anyDevice, Dial: anyAddr, Path: "tcp://" + addr}); !errors.Is(err, context.Canceled) {
		t.Errorf("Open with a cancelled context = %v", err)
	}
}

// TestCloseAsAHeldWriteStarts closes consoles just as a write starts that
// the server's FLOWCONTROL-SUSPEND holds: whichever comes first, Close
// returns and the write fails. (A write that took the port after Close
// had looked for one under way held it while Close waited for it.)
func TestCloseAsAHeldWriteStarts(t *testing.T) {
	peer := newRFC2217Peer(t)
	suspend := []byte{tnIAC, tnSB, optComPort, cpServerReplies + cpFlowSuspend, tnIAC, tnSE}
	for i := range 100 {
		c := openNet(t, Config{Devices: anyDevice, Dial: anyAddr, Path: peer.url(), NoLock: true})
		mark := fmt.Sprintf("suspended %d\n", i)
		peer.send(append(suspend, mark...))
		if _, err := c.Expect(timeout(t, 20*time.Second), 0, lit(mark), nil); err != nil {
			t.Fatal(err)
		}
		wrote := make(chan error, 1)
		go func() {
			_, err := c.Write(context.Background(), []byte("held"))
			wrote <- err
		}()
		closed := make(chan error, 1)
		go func() { closed <- c.Close() }()
		select {
		case err := <-closed:
			if err != nil {
				t.Fatalf("round %d: Close: %v", i, err)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: Close did not return while a held write was starting", i)
		}
		select {
		case err := <-wrote:
			if err == nil {
				t.Fatalf("round %d: a write the server held succeeded though the console closed", i)
			}
		case <-time.After(20 * time.Second):
			t.Fatalf("round %d: the held write did not end after Close", i)
		}
	}
}

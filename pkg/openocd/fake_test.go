package openocd

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// fakeOpenOCD is a telnet or Tcl RPC server that behaves like OpenOCD's
// where the session's reliability is concerned: over telnet it negotiates,
// greets, echoes and answers framed requests; over Tcl RPC it answers
// framed requests. Its handler can make it hang or drop the connection
// before or after the echo (over Tcl RPC: before or after running the
// command, which look the same to a client). The recordings in
// testdata/telnet and testdata/tclrpc hold the real thing; this fake
// plays the failures that cannot be recorded.
type fakeOpenOCD struct {
	t  testing.TB
	tr Transport
	ln net.Listener

	mu      sync.Mutex
	handler func(cmd string) fakeAnswer
	cmds    []string // commands received, handshakes excluded
	dials   int
	conns   []net.Conn
	lines   []string // raw lines received
	wg      sync.WaitGroup
}

// fakeAnswer is what the fake does with a command.
type fakeAnswer struct {
	out  string
	code int
	logs []string
	// hang leaves the command without an answer until the connection
	// closes; closeBeforeEcho and closeAfterEcho drop the connection.
	hang, closeBeforeEcho, closeAfterEcho bool
}

// newFakeOpenOCD starts a fake telnet server.
func newFakeOpenOCD(t testing.TB, handler func(cmd string) fakeAnswer) *fakeOpenOCD {
	return newFake(t, Telnet, handler)
}

// newFake starts a fake server of transport tr.
func newFake(t testing.TB, tr Transport, handler func(cmd string) fakeAnswer) *fakeOpenOCD {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeOpenOCD{t: t, tr: tr, ln: ln, handler: handler}
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(f.stop)
	return f
}

// addr is the address to dial, with tcl:// for a Tcl RPC server.
func (f *fakeOpenOCD) addr() string { return JoinAddr(f.hostport(), f.tr) }

// hostport is the address the server listens on.
func (f *fakeOpenOCD) hostport() string { return f.ln.Addr().String() }

// stop closes the listener and every connection, as a killed OpenOCD.
func (f *fakeOpenOCD) stop() {
	f.ln.Close()
	f.dropAll()
	f.wg.Wait()
}

// dropAll closes the connections, as OpenOCD's server does on a reset of
// its services.
func (f *fakeOpenOCD) dropAll() {
	f.mu.Lock()
	for _, c := range f.conns {
		c.Close()
	}
	f.conns = nil
	f.mu.Unlock()
}

func (f *fakeOpenOCD) received() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.cmds...)
}

func (f *fakeOpenOCD) dialCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.dials
}

func (f *fakeOpenOCD) accept() {
	defer f.wg.Done()
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.dials++
		f.conns = append(f.conns, c)
		f.mu.Unlock()
		f.wg.Add(1)
		if f.tr == TclRPC {
			go f.serveRPC(c)
		} else {
			go f.serve(c)
		}
	}
}

// fakeRequest matches a request line: the sequence number and the quoted
// command; the handshake's line is procDef, "; " and a request.
var fakeRequest = regexp.MustCompile(`^_hilrun ([0-9]+) "(.*)"$`)

func (f *fakeOpenOCD) serve(c net.Conn) {
	defer f.wg.Done()
	defer c.Close()
	c.Write([]byte("\xff\xfb\x03\xff\xfb\x01\xff\xfd\x03\xff\xfe\x01Open On-Chip Debugger\r\n\r> "))
	r := bufio.NewReader(c)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			return
		}
		line = strings.TrimSuffix(line, "\n")
		f.mu.Lock()
		f.lines = append(f.lines, line)
		f.mu.Unlock()
		if line == strings.TrimSuffix(probeLine, "\n") {
			// The probe: a comment, whose 0x1a the line editor ignores.
			c.Write([]byte("# $?#3f\r\n\x00\r> "))
			continue
		}
		if len(line) > maxLine {
			f.t.Errorf("fake openocd: a line of %d bytes, the telnet server takes %d", len(line), maxLine)
		}
		m := fakeRequest.FindStringSubmatch(strings.TrimPrefix(line, procDef+"; "))
		if m == nil {
			f.t.Errorf("fake openocd: not a request: %q", line)
			return
		}
		cmd, err := tclUnquote(m[2])
		if err != nil {
			f.t.Errorf("fake openocd: %v", err)
			return
		}
		a := fakeAnswer{out: "Open On-Chip Debugger 0.12.0 (fake)"}
		if cmd != "version" {
			f.mu.Lock()
			f.cmds = append(f.cmds, cmd)
			h := f.handler
			f.mu.Unlock()
			a = h(cmd)
		}
		if a.closeBeforeEcho {
			return
		}
		var b strings.Builder
		b.WriteString(line + "\r\n\x00")
		if a.closeAfterEcho {
			c.Write([]byte(b.String()))
			return
		}
		for _, l := range a.logs {
			b.WriteString(l + "\r\n")
		}
		if a.hang {
			c.Write([]byte(b.String()))
			r.ReadString(0) // until the client closes
			return
		}
		fmt.Fprintf(&b, "\x02%s %d %d\x03%s\x04%s\r\n\r> ", m[1], a.code, len(a.out),
			strings.ReplaceAll(a.out, "\n", "\r\n"), m[1])
		if _, err := c.Write([]byte(b.String())); err != nil {
			return
		}
	}
}

// fakeRPCRequest matches a Tcl RPC request: the sequence number and the
// quoted command; the handshake's is rpcProcDef, "; " and a request.
var fakeRPCRequest = regexp.MustCompile(`(?s)^_hilrun_rpc ([0-9]+) "(.*)"$`)

func (f *fakeOpenOCD) serveRPC(c net.Conn) {
	defer f.wg.Done()
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		req, err := r.ReadString(sub)
		if err != nil {
			return
		}
		req = strings.TrimLeft(strings.TrimSuffix(req, "\x1a"), "\n")
		f.mu.Lock()
		f.lines = append(f.lines, req)
		f.mu.Unlock()
		if req == "# $?#3f" {
			c.Write([]byte{sub})
			continue
		}
		m := fakeRPCRequest.FindStringSubmatch(strings.TrimPrefix(req, rpcProcDef+"; "))
		if m == nil {
			f.t.Errorf("fake openocd: not a request: %q", req)
			return
		}
		cmd, err := tclUnquote(m[2])
		if err != nil {
			f.t.Errorf("fake openocd: %v", err)
			return
		}
		a := fakeAnswer{out: "Open On-Chip Debugger 0.12.0 (fake)"}
		if cmd != "version" {
			f.mu.Lock()
			f.cmds = append(f.cmds, cmd)
			h := f.handler
			f.mu.Unlock()
			a = h(cmd)
		}
		if a.closeBeforeEcho || a.closeAfterEcho {
			return
		}
		if a.hang {
			r.ReadString(0) // until the client closes
			return
		}
		var log strings.Builder
		for _, l := range a.logs {
			log.WriteString(l + "\n")
		}
		fmt.Fprintf(c, "\x02%s %d %d %d\x03%s%s\x04%s\x1a", m[1], a.code, log.Len(), len(a.out), log.String(), a.out, m[1])
	}
}

// tclUnquote undoes tclQuote: it reads the inside of a Tcl double-quoted
// word with the escapes tclQuote writes.
func tclUnquote(q string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		switch c {
		case '$', '[', ']', '"':
			return "", fmt.Errorf("unescaped %q at %d in %q", c, i, q)
		case '\\':
		default:
			b.WriteByte(c)
			continue
		}
		i++
		if i == len(q) {
			return "", fmt.Errorf("a backslash ends %q", q)
		}
		switch q[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'x':
			if i+2 >= len(q) {
				return "", fmt.Errorf("short \\x escape in %q", q)
			}
			v, err := strconv.ParseUint(q[i+1:i+3], 16, 8)
			if err != nil {
				return "", err
			}
			b.WriteByte(byte(v))
			i += 2
		case 'u':
			if i+4 >= len(q) {
				return "", fmt.Errorf("short \\u escape in %q", q)
			}
			v, err := strconv.ParseUint(q[i+1:i+5], 16, 16)
			if err != nil {
				return "", err
			}
			b.WriteRune(rune(v))
			i += 4
		default:
			b.WriteByte(q[i])
		}
	}
	if !utf8.ValidString(b.String()) {
		return "", fmt.Errorf("%q unquotes to invalid UTF-8", q)
	}
	return b.String(), nil
}

// fakeGDB is a GDB remote protocol stub as QEMU's behaves on connecting:
// it sends nothing until it receives a packet, skips bytes outside
// packets, acknowledges each packet with "+" (or "-" for a bad checksum),
// answers "?" with a stop reply and "D" (detach) with OK.
type fakeGDB struct {
	ln net.Listener
	wg sync.WaitGroup

	mu       sync.Mutex
	detached int
}

func newFakeGDB(t testing.TB) *fakeGDB {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	g := &fakeGDB{ln: ln}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			g.wg.Add(1)
			go g.serve(c)
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		g.wg.Wait()
	})
	return g
}

func (g *fakeGDB) addr() string { return g.ln.Addr().String() }

func (g *fakeGDB) detaches() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.detached
}

func (g *fakeGDB) serve(c net.Conn) {
	defer g.wg.Done()
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		if _, err := r.ReadString('$'); err != nil {
			return
		}
		data, err := r.ReadString('#')
		if err != nil {
			return
		}
		data = strings.TrimSuffix(data, "#")
		var sum [2]byte
		if _, err := io.ReadFull(r, sum[:]); err != nil {
			return
		}
		var want byte
		for i := 0; i < len(data); i++ {
			want += data[i]
		}
		if fmt.Sprintf("%02x", want) != string(sum[:]) {
			c.Write([]byte("-"))
			continue
		}
		reply := ""
		switch data {
		case "?":
			reply = "S05"
		case "D":
			reply = "OK"
			g.mu.Lock()
			g.detached++
			g.mu.Unlock()
		}
		var cs byte
		for i := 0; i < len(reply); i++ {
			cs += reply[i]
		}
		fmt.Fprintf(c, "+$%s#%02x", reply, cs)
	}
}

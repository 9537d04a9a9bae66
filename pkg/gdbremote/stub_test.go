package gdbremote

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// simStub is a GDB remote stub for tests: a real server speaking the
// protocol over TCP, with a target behind it that has RAM, runs or halts,
// and behaves as QEMU's stub does where stubs differ: a byte received
// while the target runs stops it, and a packet that arrives then is lost.
type simStub struct {
	t  *testing.T
	ln net.Listener

	// Configuration, set before the first connection.
	noAck         bool   // offer QStartNoAckMode
	xPackets      bool   // understand X
	vCont         bool   // answer vCont?
	rcmd          bool   // understand qRcmd
	packetSize    int    // PacketSize offered; 0 offers none
	stopOnAttach  bool   // stop a running target on connect and say so, as QEMU does
	rle           bool   // run-length encode m replies
	corrupt       int    // damage the checksum of this many replies (ack mode resends)
	hang          bool   // stop answering packets (the stub hangs)
	greeting      []byte // sent on connect instead of speaking RSP
	bmp           bool   // no target until swdp_scan and vAttach;1, as the Black Magic Probe
	refuseUnknown bool   // print "Unknown monitor command." and answer E01, as gdbserver does
	attached      bool
	scanned       bool

	mu          sync.Mutex
	ramBase     uint64
	ram         []byte
	running     bool
	packets     []string // every packet received, in order
	lost        []string // packets that arrived while the target ran
	resets      int
	conns       int
	detach      bool // a D was received
	gotAck      int  // acknowledgements received
	sentAckMode int  // packets sent in ack mode, each owed a '+'
}

// newSimStub starts a stub configured by the functions given.
func newSimStub(t *testing.T, configure ...func(*simStub)) *simStub {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &simStub{t: t, ln: ln, noAck: true, xPackets: true, vCont: true, rcmd: true,
		packetSize: 0x1000, ramBase: 0x20000000, ram: make([]byte, 64<<10)}
	for i := range s.ram {
		s.ram[i] = byte(i * 7)
	}
	for _, f := range configure {
		f(s)
	}
	var wg sync.WaitGroup
	var cmu sync.Mutex
	var conns []net.Conn
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			cmu.Lock()
			conns = append(conns, c)
			cmu.Unlock()
			wg.Go(func() { s.serve(c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		cmu.Lock()
		for _, c := range conns {
			c.Close()
		}
		cmu.Unlock()
		wg.Wait()
		if len(s.lost) > 0 {
			t.Errorf("the client sent packets while the target ran (a real stub loses them): %q", s.lost)
		}
	})
	return s
}

func (s *simStub) addr() string { return s.ln.Addr().String() }

func (s *simStub) setRunning(r bool) {
	s.mu.Lock()
	s.running = r
	s.mu.Unlock()
}

// waitRunning waits until the target runs or halts as want says: a
// continue has no reply, so the stub may act on it after the client
// returned.
func (s *simStub) waitRunning(t *testing.T, want bool) bool {
	t.Helper()
	for start := time.Now(); time.Since(start) < 10*time.Second; time.Sleep(time.Millisecond) {
		if s.isRunning() == want {
			return true
		}
	}
	return false
}

func (s *simStub) isRunning() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

func (s *simStub) detached() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.detach
}

func (s *simStub) resetCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.resets
}

func (s *simStub) received() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.packets...)
}

// serve handles one connection until the client closes it or detaches.
func (s *simStub) serve(c io.ReadWriteCloser) {
	defer c.Close()
	s.mu.Lock()
	s.conns++
	greeting := s.greeting
	s.mu.Unlock()
	if greeting != nil {
		c.Write(greeting)
		// Echo what comes, as a telnet server does.
		buf := make([]byte, 256)
		for {
			n, err := c.Read(buf)
			if err != nil {
				return
			}
			c.Write(buf[:n])
		}
	}
	noAck := false
	awaitingAck := false // a reply sent in ack mode has not been acknowledged
	send := func(data []byte) {
		s.mu.Lock()
		bad := s.corrupt > 0 && !noAck
		if bad {
			s.corrupt--
		}
		s.mu.Unlock()
		if !noAck {
			s.mu.Lock()
			s.sentAckMode++
			awaitingAck = true
			s.mu.Unlock()
		}
		f := frame(nil, data)
		if bad {
			f[len(f)-1] ^= 1
		}
		c.Write(f)
	}
	s.mu.Lock()
	switch {
	case s.stopOnAttach && s.running:
		s.running = false
		s.mu.Unlock()
		send([]byte("T02thread:01;"))
	case s.running:
		// Stubs other than QEMU's halt the target on attach without
		// saying so.
		s.running = false
		s.mu.Unlock()
	default:
		s.mu.Unlock()
	}
	var last []byte // last reply, resent on '-'
	var d decoder
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		for _, b := range buf[:n] {
			s.mu.Lock()
			running := s.running
			if b == '+' && awaitingAck && running {
				// The acknowledgement of the last reply, as QEMU takes
				// it: not a byte that stops the target.
				s.gotAck++
				awaitingAck = false
				s.mu.Unlock()
				continue
			}
			if b == '+' || b == '$' {
				awaitingAck = false
			}
			s.mu.Unlock()
			if running {
				// Any byte stops a running target; the packet it began
				// is lost, as on QEMU.
				s.mu.Lock()
				s.running = false
				if b != 0x03 {
					s.lost = append(s.lost, fmt.Sprintf("byte %q", b))
				}
				s.mu.Unlock()
				last = frame(nil, []byte("T02thread:01;"))
				send([]byte("T02thread:01;"))
				continue
			}
			if b == 0x03 && d.state == stIdle {
				continue // already halted: nothing to report
			}
			d.feed([]byte{b})
			// Each packet is handled as soon as it is complete, before
			// the bytes after it.
			for {
				e, ok := d.next()
				if !ok {
					break
				}
				switch e.kind {
				case '+':
					s.mu.Lock()
					s.gotAck++
					s.mu.Unlock()
					continue
				case '-':
					if last != nil {
						c.Write(last)
					}
					continue
				}
				if e.err != nil {
					if !noAck {
						c.Write([]byte{'-'})
					}
					continue
				}
				if !noAck {
					c.Write([]byte{'+'})
				}
				s.mu.Lock()
				s.packets = append(s.packets, string(e.data))
				hang := s.hang
				s.mu.Unlock()
				if hang {
					continue
				}
				reply, quit := s.handle(e.data, &noAck, send)
				if reply != nil {
					last = frame(nil, reply)
					send(reply)
				}
				if quit {
					return
				}
			}
		}
	}
}

// handle answers one packet; a nil reply sends none.
func (s *simStub) handle(p []byte, noAck *bool, send func([]byte)) (reply []byte, quit bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	str := string(p)
	switch {
	case strings.HasPrefix(str, "qSupported"):
		var f []string
		if s.packetSize > 0 {
			f = append(f, fmt.Sprintf("PacketSize=%x", s.packetSize))
		}
		if s.noAck {
			f = append(f, "QStartNoAckMode+")
		}
		f = append(f, "qXfer:features:read+")
		return []byte(strings.Join(f, ";")), false
	case str == "QStartNoAckMode" && s.noAck:
		*noAck = true
		return []byte("OK"), false
	case str == "?":
		if s.bmp && !s.attached {
			return []byte("W00"), false
		}
		return []byte("T05thread:01;"), false
	case s.bmp && str == "vAttach;1" && s.scanned:
		s.attached = true
		return []byte("T05"), false
	case s.bmp && strings.HasPrefix(str, "vAttach;"):
		return []byte("E01"), false
	case s.bmp && !s.attached && strings.IndexByte("mMXcD", str[0]) >= 0:
		return []byte("EFF"), false
	case str == "vCont?" && s.vCont:
		return []byte("vCont;c;C;s;S"), false
	case str == "vCont;c" && s.vCont, str == "c":
		s.running = true
		return nil, false
	case str == "D":
		s.detach = true
		s.running = true
		// QEMU ends the connection; the Black Magic Probe's USB port
		// stays open.
		return []byte("OK"), !s.bmp
	case str[0] == 'm':
		addr, n, ok := parseAddrLen(str[1:])
		if !ok {
			return []byte("E01"), false
		}
		b, ok := s.mem(addr, n)
		if !ok {
			return []byte("E14"), false
		}
		h := []byte(hex.EncodeToString(b))
		if s.rle {
			h = rleEncode(h)
		}
		return h, false
	case str[0] == 'M':
		head, data, _ := strings.Cut(str[1:], ":")
		addr, n, ok := parseAddrLen(head)
		b, err := hex.DecodeString(data)
		if !ok || err != nil || len(b) != n {
			return []byte("E01"), false
		}
		return s.write(addr, b), false
	case str[0] == 'X' && s.xPackets:
		head, data, _ := bytes.Cut(p[1:], []byte(":"))
		addr, n, ok := parseAddrLen(string(head))
		if !ok || len(data) != n {
			return []byte("E01"), false
		}
		return s.write(addr, data), false
	case strings.HasPrefix(str, "qRcmd,") && s.rcmd:
		cmd, err := hex.DecodeString(str[6:])
		if err != nil {
			return []byte("E01"), false
		}
		out := "unknown command: " + string(cmd) + "\n"
		switch string(cmd) {
		case "reset halt":
			s.resets++
			out = "target halted after reset\n"
		case "fail":
			return []byte("E02"), false
		case "swdp_scan":
			s.scanned = true
			out = "Target voltage: 3.3V\nAvailable Targets:\nNo. Att Driver\n 1      Simulated Cortex-M3\n"
		case "info":
			out = strings.Repeat("line of monitor output\n", 100)
		default:
			if s.refuseUnknown {
				s.mu.Unlock()
				send(append([]byte("O"), hex.EncodeToString([]byte("Unknown monitor command.\n\n"))...))
				send(append([]byte("O"), hex.EncodeToString([]byte("The following monitor commands are supported:\n  exit\n"))...))
				s.mu.Lock()
				return []byte("E01"), false
			}
		}
		// Output in several O packets, as stubs send long output.
		for len(out) > 0 {
			k := min(len(out), 40)
			s.mu.Unlock()
			send(append([]byte("O"), hex.EncodeToString([]byte(out[:k]))...))
			s.mu.Lock()
			out = out[k:]
		}
		return []byte("OK"), false
	}
	return []byte{}, false
}

func parseAddrLen(s string) (uint64, int, bool) {
	a, l, ok := strings.Cut(s, ",")
	addr, err1 := strconv.ParseUint(a, 16, 64)
	n, err2 := strconv.ParseUint(l, 16, 32)
	return addr, int(n), ok && err1 == nil && err2 == nil
}

func (s *simStub) mem(addr uint64, n int) ([]byte, bool) {
	if addr < s.ramBase || addr+uint64(n) > s.ramBase+uint64(len(s.ram)) {
		return nil, false
	}
	return append([]byte(nil), s.ram[addr-s.ramBase:][:n]...), true
}

func (s *simStub) write(addr uint64, b []byte) []byte {
	if addr < s.ramBase || addr+uint64(len(b)) > s.ramBase+uint64(len(s.ram)) {
		return []byte("E14")
	}
	copy(s.ram[addr-s.ramBase:], b)
	return []byte("OK")
}

// rleEncode run-length encodes runs of 4 or more characters, avoiding the
// counts the protocol forbids (those that would send '#' or '$').
func rleEncode(h []byte) []byte {
	var out []byte
	for i := 0; i < len(h); {
		j := i
		for j < len(h) && h[j] == h[i] && j-i < 97 {
			j++
		}
		run := j - i
		out = append(out, h[i])
		extra := run - 1
		if extra == 6 || extra == 7 {
			extra = 5
		}
		if extra >= 3 {
			out = append(out, '*', byte(extra+29))
			i += 1 + extra
			continue
		}
		i++
	}
	return out
}

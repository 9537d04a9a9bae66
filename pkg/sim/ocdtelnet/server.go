// Package ocdtelnet is a stand-in for OpenOCD's telnet server over the
// virtual board's memory, for machines without OpenOCD: it speaks enough of
// OpenOCD's telnet protocol (option negotiation, echo, the "> " prompt, and
// the memory and target commands) for hilrun's OpenOCD client and for a
// person with a telnet program. Where OpenOCD is installed, hilrun drives
// the real one against the board's JTAG port instead.
package ocdtelnet

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"github.com/hilrun/hilrun/pkg/sim"
)

// Server answers OpenOCD telnet clients with the board's memory.
type Server struct {
	mem *sim.Memory
	ln  net.Listener

	mu     sync.Mutex
	conns  map[net.Conn]bool
	closed bool
	halted bool
	wg     sync.WaitGroup
}

// Serve listens on addr ("127.0.0.1:0" picks a free port) until ctx ends or
// Close is called.
func Serve(ctx context.Context, mem *sim.Memory, addr string) (*Server, error) {
	var lc net.ListenConfig
	ln, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for telnet clients: %w", err)
	}
	s := &Server{mem: mem, ln: ln, conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept()
	context.AfterFunc(ctx, func() { s.Close() })
	return s, nil
}

// Addr is the host:port the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Close stops the server and its connections; it is idempotent.
func (s *Server) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	err := s.ln.Close()
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

func (s *Server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = true
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serve(c)
	}
}

// The option negotiation OpenOCD sends first: WILL SUPPRESS-GO-AHEAD, WILL
// ECHO, DO SUPPRESS-GO-AHEAD, DONT ECHO.
var negotiation = []byte{0xff, 0xfb, 0x03, 0xff, 0xfb, 0x01, 0xff, 0xfd, 0x03, 0xff, 0xfe, 0x01}

func (s *Server) serve(c net.Conn) {
	defer s.wg.Done()
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		c.Close()
	}()
	w := bufio.NewWriter(c)
	w.Write(negotiation)
	w.WriteString("Open On-Chip Debugger (hilrun virtual board stand-in)\r\n> ")
	w.Flush()
	r := bufio.NewReader(c)
	for {
		line, err := readLine(r)
		if err != nil {
			return
		}
		// Echo, as OpenOCD's line editor does.
		w.WriteString(line + "\r\n")
		if strings.TrimSpace(line) == "exit" {
			w.Flush()
			return
		}
		out := s.line(line)
		if out != "" {
			w.WriteString(strings.ReplaceAll(out, "\n", "\r\n") + "\r\n")
		}
		w.WriteString("> ")
		if err := w.Flush(); err != nil {
			return
		}
	}
}

// readLine reads a line, dropping telnet commands.
func readLine(r *bufio.Reader) (string, error) {
	var b []byte
	for {
		c, err := r.ReadByte()
		if err != nil {
			return "", err
		}
		switch {
		case c == 0xff:
			cmd, err := r.ReadByte()
			if err != nil {
				return "", err
			}
			if cmd >= 251 && cmd <= 254 {
				if _, err := r.ReadByte(); err != nil {
					return "", err
				}
			}
		case c == '\n' || c == '\r':
			if len(b) > 0 {
				return string(b), nil
			}
		case c == 0:
		default:
			b = append(b, c)
		}
	}
}

// frameCall is a request of hilrun's client: it defines a procedure that
// frames each command's result, then calls it as _hilrun SEQ "COMMAND".
var frameCall = regexp.MustCompile(`_hilrun ([0-9]+) "((?:[^"\\]|\\.)*)"\s*$`)

// line runs one line typed at the prompt and returns what OpenOCD would
// print.
func (s *Server) line(line string) string {
	if m := frameCall.FindStringSubmatch(line); m != nil {
		cmd, err := unquote(m[2])
		code, out := 1, ""
		if err != nil {
			out = err.Error()
		} else {
			code, out = s.run(cmd)
		}
		out = strings.ReplaceAll(out, "\x00", `\0`)
		return fmt.Sprintf("\x02%s %d %d\x03%s\x04%s", m[1], code, len(out), out, m[1])
	}
	if t := strings.TrimSpace(line); strings.HasPrefix(t, "proc ") || strings.HasPrefix(t, "#") {
		// A comment: hilrun's client opens a connection with one.
		return ""
	}
	_, out := s.run(line)
	return out
}

// unquote reads the inside of a Tcl double-quoted word.
func unquote(q string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(q); i++ {
		c := q[i]
		if c != '\\' {
			b.WriteByte(c)
			continue
		}
		i++
		if i >= len(q) {
			return "", errors.New("a backslash ends the command")
		}
		switch q[i] {
		case 'n':
			b.WriteByte('\n')
		case 't':
			b.WriteByte('\t')
		case 'r':
			b.WriteByte('\r')
		case 'x', 'u':
			n := 2
			if q[i] == 'u' {
				n = 4
			}
			if i+1+n > len(q) {
				return "", errors.New("a short escape ends the command")
			}
			v, err := strconv.ParseUint(q[i+1:i+1+n], 16, 32)
			if err != nil {
				return "", fmt.Errorf("bad escape \\%s", q[i:i+1+n])
			}
			b.WriteRune(rune(v))
			i += n
		default:
			b.WriteByte(q[i])
		}
	}
	return b.String(), nil
}

// OpenOCD's error numbers for what the stand-in reports.
const (
	errFail        = -4
	errUnaligned   = -306
	errSyntax      = -601
	errNotFound    = -602
	errInvalidArgs = -603
)

// run executes one command: 0 and its output, or an error code and its
// message, in OpenOCD's words.
func (s *Server) run(line string) (int, string) {
	f := strings.Fields(line)
	if len(f) == 0 {
		return 0, ""
	}
	args := f[1:]
	switch f[0] {
	case "version":
		return 0, "Open On-Chip Debugger 0.12.0 (hilrun virtual board stand-in)"
	case "echo":
		return 0, strings.Join(args, " ")
	case "targets":
		return 0, "    TargetName         Type       Endian TapName            State       \n--  ------------------ ---------- ------ ------------------ ------------\n 0* sim.mem            mem_ap     little sim.cpu            running"
	case "halt":
		s.setHalted(true)
		return 0, ""
	case "resume":
		s.setHalted(false)
		return 0, ""
	case "reset":
		mode := "run"
		if len(args) > 0 {
			mode = args[0]
		}
		switch mode {
		case "run", "halt", "init":
			s.mem.Reset()
			s.setHalted(mode != "run")
			return 0, ""
		}
		return errSyntax, fmt.Sprintf("invalid reset mode %q", mode)
	case "read_memory":
		return s.readMemory(args)
	case "write_memory":
		return s.writeMemory(line)
	case "mdd", "mdw", "mdh", "mdb":
		return s.md(f[0], args)
	case "mwd", "mww", "mwh", "mwb":
		return s.mw(f[0], args)
	}
	return 1, fmt.Sprintf("invalid command name \"%s\"", f[0])
}

func (s *Server) setHalted(h bool) {
	s.mu.Lock()
	s.halted = h
	s.mu.Unlock()
}

func widthOf(cmd string) int {
	switch cmd[len(cmd)-1] {
	case 'd':
		return 64
	case 'w':
		return 32
	case 'h':
		return 16
	}
	return 8
}

func (s *Server) read(addr uint64, width int) (uint64, error) {
	if addr%uint64(width/8) != 0 {
		return 0, errUnalignedAccess
	}
	if width == 64 {
		lo, err := s.mem.Read(uint32(addr), 32)
		if err != nil {
			return 0, err
		}
		hi, err := s.mem.Read(uint32(addr+4), 32)
		return uint64(hi)<<32 | uint64(lo), err
	}
	v, err := s.mem.Read(uint32(addr), width)
	return uint64(v), err
}

func (s *Server) write(addr uint64, width int, v uint64) error {
	if addr%uint64(width/8) != 0 {
		return errUnalignedAccess
	}
	if width == 64 {
		if err := s.mem.Write(uint32(addr), 32, uint32(v)); err != nil {
			return err
		}
		return s.mem.Write(uint32(addr+4), 32, uint32(v>>32))
	}
	return s.mem.Write(uint32(addr), width, uint32(v))
}

var errUnalignedAccess = errors.New("unaligned access")

func failure(op string, addr uint64, err error) (int, string) {
	if errors.Is(err, errUnalignedAccess) {
		return errUnaligned, fmt.Sprintf("Failed to %s memory at 0x%08x: unaligned access", op, addr)
	}
	return errFail, fmt.Sprintf("Failed to %s memory at 0x%08x", op, addr)
}

func (s *Server) readMemory(args []string) (int, string) {
	if len(args) != 3 {
		return errSyntax, "usage: read_memory address width count"
	}
	addr, err1 := strconv.ParseUint(args[0], 0, 64)
	width, err2 := strconv.Atoi(args[1])
	count, err3 := strconv.Atoi(args[2])
	if err := errors.Join(err1, err2, err3); err != nil || !validWidth(width) || count < 1 {
		return errInvalidArgs, "read_memory: invalid address, width or count"
	}
	vals := make([]string, count)
	for i := range vals {
		a := addr + uint64(i*width/8)
		v, err := s.read(a, width)
		if err != nil {
			return failure("read", a, err)
		}
		vals[i] = fmt.Sprintf("0x%x", v)
	}
	return 0, strings.Join(vals, " ")
}

var writeMemoryArgs = regexp.MustCompile(`^write_memory\s+(\S+)\s+(\S+)\s+\{([^}]*)\}\s*$`)

func (s *Server) writeMemory(line string) (int, string) {
	m := writeMemoryArgs.FindStringSubmatch(strings.TrimSpace(line))
	if m == nil {
		return errSyntax, "usage: write_memory address width data"
	}
	addr, err1 := strconv.ParseUint(m[1], 0, 64)
	width, err2 := strconv.Atoi(m[2])
	if err := errors.Join(err1, err2); err != nil || !validWidth(width) {
		return errInvalidArgs, "write_memory: invalid address or width"
	}
	for i, f := range strings.Fields(m[3]) {
		v, err := strconv.ParseUint(f, 0, 64)
		if err != nil {
			return errInvalidArgs, fmt.Sprintf("write_memory: invalid value %q", f)
		}
		a := addr + uint64(i*width/8)
		if err := s.write(a, width, v); err != nil {
			return failure("write", a, err)
		}
	}
	return 0, ""
}

func validWidth(w int) bool { return w == 8 || w == 16 || w == 32 || w == 64 }

// md prints memory as OpenOCD's mdw does: an address, then up to 32 bytes
// of values a line.
func (s *Server) md(cmd string, args []string) (int, string) {
	if len(args) > 0 && args[0] == "phys" {
		args = args[1:]
	}
	if len(args) < 1 || len(args) > 2 {
		return errSyntax, fmt.Sprintf("usage: %s ['phys'] address [count]", cmd)
	}
	addr, err := strconv.ParseUint(args[0], 0, 64)
	if err != nil {
		return errInvalidArgs, fmt.Sprintf("%s: invalid address %q", cmd, args[0])
	}
	count := 1
	if len(args) == 2 {
		if count, err = strconv.Atoi(args[1]); err != nil || count < 1 {
			return errInvalidArgs, fmt.Sprintf("%s: invalid count %q", cmd, args[1])
		}
	}
	width := widthOf(cmd)
	perLine := 32 / (width / 8)
	var b strings.Builder
	for i := 0; i < count; i++ {
		a := addr + uint64(i*width/8)
		if i%perLine == 0 {
			if i > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "0x%08x:", a)
		}
		v, err := s.read(a, width)
		if err != nil {
			return failure("read", a, err)
		}
		fmt.Fprintf(&b, " %0*x", width/4, v)
	}
	b.WriteString(" ")
	return 0, b.String()
}

func (s *Server) mw(cmd string, args []string) (int, string) {
	if len(args) > 0 && args[0] == "phys" {
		args = args[1:]
	}
	if len(args) < 2 || len(args) > 3 {
		return errSyntax, fmt.Sprintf("usage: %s ['phys'] address value [count]", cmd)
	}
	addr, err1 := strconv.ParseUint(args[0], 0, 64)
	v, err2 := strconv.ParseUint(args[1], 0, 64)
	count := 1
	var err3 error
	if len(args) == 3 {
		count, err3 = strconv.Atoi(args[2])
	}
	if err := errors.Join(err1, err2, err3); err != nil || count < 1 {
		return errInvalidArgs, fmt.Sprintf("%s: invalid arguments", cmd)
	}
	width := widthOf(cmd)
	for i := 0; i < count; i++ {
		a := addr + uint64(i*width/8)
		if err := s.write(a, width, v); err != nil {
			return failure("write", a, err)
		}
	}
	return 0, ""
}

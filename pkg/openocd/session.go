// Package openocd drives OpenOCD for hilrun: one session per probe, over
// OpenOCD's Tcl RPC server or its telnet server, kept for the whole run (a
// memory read costs a round trip, not a process start), and the OpenOCD
// process itself. A firmware's symbols are pkg/elfsym's.
package openocd

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"os"
	"sync"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/dial"
)

// readBuffer is the size of a session's read buffer in bytes.
const readBuffer = 64 << 10

// aLongTimeAgo is a deadline in the past, to wake blocked I/O at once.
var aLongTimeAgo = time.Unix(1, 0)

// Option configures a Session.
type Option func(*Session)

// WithDialer makes the session connect with dial instead of through the
// dial gate: in tests, a fake.
func WithDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) Option {
	return func(s *Session) { s.dial = dial }
}

// WithGate makes the session connect through the dial gate's policy p,
// as a debugger a probe attaches to. Without it (or WithDialer) a session
// connects nowhere.
func WithGate(p dial.Policy) Option {
	return withGate(p, dial.Probe)
}

func withGate(p dial.Policy, purpose dial.Purpose) Option {
	return func(s *Session) {
		s.dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			return p.Dial(ctx, purpose, network, addr)
		}
	}
}

// WithTransport makes the session talk to OpenOCD's server t at an address
// without a scheme (Dial reads "tcl://HOST:PORT" as TclRPC whatever the
// option says). The default is Telnet.
func WithTransport(t Transport) Option {
	return func(s *Session) { s.tr = t }
}

// WithLog passes every line OpenOCD logs on the session to fn: messages of
// commands (also kept in their CommandError) and, over telnet, those it
// prints on its own, such as target state changes. fn runs inside the
// method that read the line and must not call the session.
func WithLog(fn func(line string)) Option {
	return func(s *Session) { s.log = fn }
}

// Session is a client of OpenOCD's Tcl RPC server or of its telnet server:
// one connection, kept open across commands, that runs one command at a
// time. Its methods are safe for concurrent use; commands queue.
//
// A connection that is found closed when a command is sent (OpenOCD was
// restarted, say) is replaced once, transparently: over telnet, a command
// OpenOCD did not echo is known not to have run; over Tcl RPC, which
// echoes nothing, the session looks whether the server closed an idle
// connection before it sends, and a command sent on a connection that
// then closes counts as one whose effect is unknown. A command that times
// out drops the connection, and the next command connects anew. While
// OpenOCD cannot be reached, a command none of which was sent is retried
// with back-off (10 ms doubling to 500 ms) until its context ends, or for
// 10 s under a context without a deadline; a memory read, which is safe to
// repeat, is retried so even when the connection dropped after it was
// sent or while it ran. When that does not help, the error wraps
// ErrUnavailable and says how often it was tried; a command OpenOCD ran
// and refused returns a *CommandError.
type Session struct {
	addr  string    // HOST:PORT
	tr    Transport // the server at addr
	shown string    // addr in messages: with tcl:// for TclRPC
	dial  func(ctx context.Context, network, addr string) (net.Conn, error)
	log   func(line string)

	// sem holds a token while a command runs, so that waiting for a turn
	// can be cancelled.
	sem chan struct{}
	seq uint64 // number of the last request sent; guarded by sem

	mu      sync.Mutex // guards the fields below
	conn    *conn
	closed  bool
	version string

	noReadMemory  bool // target lacks read_memory: use md*; guarded by sem
	noWriteMemory bool // target lacks write_memory: use mw*; guarded by sem
	// split64 is set once a 64-bit access failed where two 32-bit ones
	// worked: the target's bus has no 64-bit accesses (a 32-bit core), so
	// 64-bit values are read and written as pairs of 32-bit words, low
	// word first (little-endian). Guarded by sem.
	split64 bool
}

// conn is one connection and what it has received that is not decoded
// yet.
type conn struct {
	net.Conn
	buf []byte
	// Over telnet:
	dec decoder
	// greeted is set once the first echo arrived: the lines before it
	// are the server's banner, not log messages.
	greeted bool
	// Over Tcl RPC:
	rpc rpcDecoder
}

// Reply is what OpenOCD printed for a command.
type Reply struct {
	// Result is the command's Tcl result: what telnet prints after the
	// log messages.
	Result string
	// Log holds the messages OpenOCD logged while the command ran, one a
	// line, in order.
	Log []string
}

// Dial connects to OpenOCD at addr and checks that it answers. addr is
// "tcl://HOST:PORT" for its Tcl RPC server (tcl_port), or "HOST:PORT" (or
// "telnet://HOST:PORT") for its telnet server (telnet_port) unless
// WithTransport says otherwise. A GDB stub, or OpenOCD's other server, at
// addr is an error wrapping ErrWrongServer that says which address to use.
// ctx bounds connecting, not the session.
func Dial(ctx context.Context, addr string, opts ...Option) (*Session, error) {
	s := &Session{sem: make(chan struct{}, 1)}
	for _, o := range opts {
		o(s)
	}
	hp, tr, err := SplitAddr(addr, s.tr)
	if err != nil {
		return nil, err
	}
	s.addr, s.tr, s.shown = hp, tr, JoinAddr(hp, tr)
	if s.dial == nil {
		WithGate(dial.Policy{})(s)
	}
	c, err := s.connect(ctx, "connect to")
	if err != nil {
		return nil, err
	}
	s.conn = c
	return s, nil
}

// Addr returns HOST:PORT of the OpenOCD server the session talks to.
func (s *Session) Addr() string { return s.addr }

// Transport returns the OpenOCD server the session talks to.
func (s *Session) Transport() Transport { return s.tr }

// Version returns what OpenOCD's version command printed when the session
// last connected, such as "Open On-Chip Debugger 0.12.0".
func (s *Session) Version() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.version
}

// Close closes the connection. A command in progress returns an error
// wrapping ErrClosed. Close is idempotent and returns nil.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
	return nil
}

// Command runs cmd, a line of OpenOCD's Tcl, and returns its result: what
// OpenOCD's telnet prompt prints after the command's log messages. cmd may
// hold several commands separated by ";" or newlines. Over telnet a NUL
// byte in the result reads as the two characters \0; over Tcl RPC it
// stays.
//
// When OpenOCD refuses the command the error is a *CommandError holding
// OpenOCD's words. When ctx ends first, the error wraps ctx.Err(), and the
// connection is dropped; OpenOCD may still run the command later.
func (s *Session) Command(ctx context.Context, cmd string) (string, error) {
	r, err := s.Run(ctx, cmd)
	return r.Result, err
}

// Run is Command that also returns the messages OpenOCD logged while the
// command ran.
func (s *Session) Run(ctx context.Context, cmd string) (Reply, error) {
	if _, err := s.encode(math.MaxUint64, cmd); err != nil {
		return Reply{}, fmt.Errorf("openocd: %w", err)
	}
	if err := s.acquire(ctx); err != nil {
		return Reply{}, err
	}
	defer s.release()
	return s.run(ctx, cmd)
}

// acquire waits for the session's turn.
func (s *Session) acquire(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("openocd at %s: waiting for the previous command: %w", s.shown, ctx.Err())
	}
}

func (s *Session) release() { <-s.sem }

func (s *Session) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// drop closes c and forgets it, so the next command connects anew.
func (s *Session) drop(c *conn) {
	c.Close()
	s.mu.Lock()
	if s.conn == c {
		s.conn = nil
	}
	s.mu.Unlock()
}

// connect dials the server, checks that it is the OpenOCD server the
// session talks to and asks for its version. verb says what for, in
// errors.
func (s *Session) connect(ctx context.Context, verb string) (*conn, error) {
	nc, err := s.dial(ctx, "tcp", s.addr)
	if err != nil {
		return nil, &unavailableError{msg: verb + " openocd at " + s.shown, err: err}
	}
	c := &conn{Conn: nc, buf: make([]byte, readBuffer)}
	start := time.Now()
	failed := func(err error) (*conn, error) {
		nc.Close()
		var ws *wrongServerError
		if errors.As(err, &ws) {
			return nil, err
		}
		if ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded) {
			cerr := ctx.Err()
			if cerr == nil {
				cerr = context.DeadlineExceeded
			}
			return nil, &unavailableError{
				msg: fmt.Sprintf("%s openocd at %s: no answer within %v", verb, s.shown, time.Since(start).Round(time.Millisecond)),
				err: cerr,
			}
		}
		return nil, &unavailableError{msg: verb + " openocd at " + s.shown, err: err}
	}
	first, err := s.detect(ctx, c)
	if err != nil {
		return failed(err)
	}
	s.seq++
	var hs string
	if s.tr == TclRPC {
		// What follows the probe's reply, if anything, is garbage.
		hs = rpcHandshake(s.seq)
	} else {
		c.dec.feed(first)
		hs = handshake(s.seq)
	}
	r, _, _, err := s.roundTrip(ctx, c, s.seq, hs)
	if err != nil {
		return failed(err)
	}
	if r.code != 0 && r.code != 2 {
		nc.Close()
		return nil, &unavailableError{msg: fmt.Sprintf("%s openocd at %s: its version command failed: %s", verb, s.shown, r.out)}
	}
	s.mu.Lock()
	s.version = r.out
	s.mu.Unlock()
	return c, nil
}

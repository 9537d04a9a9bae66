package gdbremote

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"time"

	"go.bug.st/serial"

	"github.com/hilrun/hilrun/pkg/gate/dial"
)

// transport carries the protocol's bytes: a TCP connection, a Unix socket
// or a serial port. Read returns at least one byte, or an error once the
// context ends or the deadline set by begin passes.
type transport interface {
	// begin bounds the reads and writes until end by ctx and deadline.
	begin(ctx context.Context, deadline time.Time)
	// setDeadline moves the deadline, for one more request.
	setDeadline(deadline time.Time)
	end()
	Read(p []byte) (int, error)
	Write(p []byte) (int, error)
	Close() error
}

// errTimeout is what a transport's Read returns when the deadline given to
// begin passed.
var errTimeout = errors.New("no reply in time")

// isSerialAddr reports whether addr names a serial device rather than
// HOST:PORT.
func isSerialAddr(addr string) bool {
	_, _, err := net.SplitHostPort(addr)
	return err != nil
}

// isUnixSocket reports whether addr is the path of a Unix socket, such as
// the GDB server of a QEMU that hilrun launched.
func isUnixSocket(addr string) bool {
	fi, err := os.Stat(addr)
	return err == nil && fi.Mode()&os.ModeSocket != 0
}

// streamTransport is a stream connection: TCP or a Unix socket.
type streamTransport struct {
	c    net.Conn
	stop func() bool
	ctx  context.Context

	mu        sync.Mutex
	cancelled bool // ctx ended: the deadline stays in the past
}

// dialStream connects to addr over network: "unix" (a socket's path) or
// "tcp" (HOST:PORT).
func dialStream(ctx context.Context, gate dial.Policy, network, addr string) (*streamTransport, error) {
	c, err := gate.Dial(ctx, dial.Probe, network, addr)
	if err != nil {
		return nil, err
	}
	if tc, ok := c.(*net.TCPConn); ok {
		// Each request is one small packet the stub must see at once:
		// Nagle's algorithm would hold it back until the previous one
		// was acknowledged.
		if err := tc.SetNoDelay(true); err != nil {
			c.Close()
			return nil, err
		}
	}
	return &streamTransport{c: c}, nil
}

func (t *streamTransport) begin(ctx context.Context, deadline time.Time) {
	t.ctx = ctx
	t.cancelled = false
	t.c.SetDeadline(deadline)
	t.stop = context.AfterFunc(ctx, func() {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.cancelled = true
		t.c.SetDeadline(time.Unix(1, 0))
	})
}

func (t *streamTransport) setDeadline(deadline time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.cancelled {
		t.c.SetDeadline(deadline)
	}
}

func (t *streamTransport) end() {
	if t.stop != nil {
		t.stop()
		t.stop = nil
	}
	t.ctx = nil
}

func (t *streamTransport) Read(p []byte) (int, error) {
	n, err := t.c.Read(p)
	return n, t.why(err)
}

func (t *streamTransport) Write(p []byte) (int, error) {
	n, err := t.c.Write(p)
	return n, t.why(err)
}

// why turns a deadline error into the context's error or errTimeout.
func (t *streamTransport) why(err error) error {
	if err == nil || !errors.Is(err, os.ErrDeadlineExceeded) {
		return err
	}
	if t.ctx != nil && t.ctx.Err() != nil {
		return context.Cause(t.ctx)
	}
	return errTimeout
}

func (t *streamTransport) Close() error { return t.c.Close() }

// serialTransport is a serial port, such as a Black Magic Probe's GDB
// port. go.bug.st/serial returns (0, nil) when its read timeout passes, so
// Read loops on short timeouts, checking the context and the deadline in
// between.
type serialTransport struct {
	p        serial.Port
	ctx      context.Context
	deadline time.Time
}

// serialPoll is how often a blocked serial read looks at its context.
const serialPoll = 50 * time.Millisecond

func openSerial(path string, baud int, open func(string, *serial.Mode) (serial.Port, error)) (*serialTransport, error) {
	p, err := open(path, &serial.Mode{BaudRate: baud, DataBits: 8, Parity: serial.NoParity, StopBits: serial.OneStopBit})
	if err != nil {
		var pe *serial.PortError
		if errors.As(err, &pe) {
			return nil, fmt.Errorf("%s", pe.Error())
		}
		return nil, err
	}
	if err := p.SetReadTimeout(serialPoll); err != nil {
		p.Close()
		return nil, err
	}
	return &serialTransport{p: p}, nil
}

func (t *serialTransport) begin(ctx context.Context, deadline time.Time) {
	t.ctx, t.deadline = ctx, deadline
}

func (t *serialTransport) setDeadline(deadline time.Time) { t.deadline = deadline }

func (t *serialTransport) end() { t.ctx = nil }

func (t *serialTransport) Read(p []byte) (int, error) {
	for {
		if t.ctx != nil && t.ctx.Err() != nil {
			return 0, context.Cause(t.ctx)
		}
		if !t.deadline.IsZero() && time.Now().After(t.deadline) {
			return 0, errTimeout
		}
		n, err := t.p.Read(p)
		if n > 0 || err != nil {
			return n, err
		}
	}
}

func (t *serialTransport) Write(p []byte) (int, error) { return t.p.Write(p) }
func (t *serialTransport) Close() error                { return t.p.Close() }

// Package gdbremote is hilrun's debug-probe backend for GDB remote stubs:
// QEMU's gdbstub, OpenOCD's, pyOCD's and J-Link's GDB servers over TCP, and
// the Black Magic Probe over a serial port. A Session is one persistent
// connection speaking the GDB remote serial protocol itself (no gdb
// process), with no-ack mode when the stub offers it and TCP_NODELAY, so a
// 32-bit read is one packet each way.
//
// GDB stubs are all-stop: the target must be halted for any request. A
// memory access on a running target halts it (Ctrl-C), reads or writes,
// and resumes it; LastAccessHalted says it did.
package gdbremote

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.bug.st/serial"

	"github.com/hilrun/hilrun/pkg/gate/devices"
	"github.com/hilrun/hilrun/pkg/gate/dial"
)

// AttachMode says whether Dial leaves the target running.
type AttachMode int

const (
	// AttachAuto resumes the target after the handshake when the
	// attach itself stopped it, and leaves it halted otherwise. The stub
	// says which: QEMU's sends a stop reply of its own the moment a
	// debugger connects to a running guest, before answering anything,
	// and sends none when the guest was already paused (started with -S,
	// or left halted by an earlier session). Other stubs give no such
	// sign: one that halts the target on attach without a stop reply (the
	// Black Magic Probe's vAttach does) looks like a halted target, so
	// use AttachRunning when the target ran.
	AttachAuto AttachMode = iota
	// AttachRunning resumes the target after the handshake: it was
	// running before hilrun attached.
	AttachRunning
	// AttachHalted leaves the target as the attach left it.
	AttachHalted
)

// Options configure Dial. The zero value works for QEMU.
type Options struct {
	// HandshakeTimeout bounds connecting and the handshake; 0 means 3 s.
	HandshakeTimeout time.Duration
	// ReplyTimeout bounds the wait for one reply once a request is sent,
	// halting included; 0 means 10 s. A stub that takes longer is treated
	// as gone.
	ReplyTimeout time.Duration
	// Attach says whether the target is left running after Dial.
	Attach AttachMode
	// Baud is a serial port's speed; 0 means 115200 (the Black Magic Probe
	// ignores it).
	Baud int
	// ResetCommand is the monitor command Reset sends; "" means
	// "system_reset" on QEMU and "reset halt" on other stubs (OpenOCD's and
	// pyOCD's GDB servers understand it).
	ResetCommand string
	// ScanCommand and AttachTarget serve stubs that start with no target
	// attached (? answers W or X), as the Black Magic Probe does: Dial
	// runs the monitor command ScanCommand ("" means "swdp_scan"; "-"
	// skips it), then attaches target number AttachTarget (vAttach; 0
	// means 1). The target halts on attach.
	ScanCommand  string
	AttachTarget int
	// Dial is the dial gate's policy a stub at HOST:PORT or on a Unix
	// socket is reached through; the zero policy reaches none.
	Dial dial.Policy
	// Devices is the device gate's policy a stub on a serial port is
	// opened through; the zero policy opens none.
	Devices devices.Policy
	// OpenSerial opens a serial port instead of Devices, for tests.
	OpenSerial func(path string, mode *serial.Mode) (serial.Port, error)
}

// Session is one connection to a GDB remote stub. Its methods are safe for
// concurrent use; they run one at a time.
type Session struct {
	mu   sync.Mutex
	addr string
	opts Options
	t    transport
	dec  decoder
	rbuf []byte
	wbuf []byte

	noAck        bool
	ackOwed      bool // a reply's '+' waits for the next write
	ackTimer     *time.Timer
	perReply     bool // each request gets ReplyTimeout for its reply
	pktSize      int
	multiprocess bool
	xState       int // 0 unknown, 1 X works, -1 use M
	vcont        int // 0 unknown, 1 vCont;c, -1 c
	qemu         int // 0 unknown, 1 QEMU, -1 not

	running     bool // a continue was sent and no stop seen since
	wantRunning bool // what Close leaves: running unless the caller halted
	wasRunning  bool
	lastHalted  bool
	exited      string // the W or X reply once the target is gone
	broken      error  // set when the stream's state is unknown
	closed      bool
}

// Dial connects to the stub at addr (HOST:PORT, the path of a Unix socket,
// or a serial device path such as /dev/ttyACM0), shakes hands, and returns
// the session with the target running or halted as Options.Attach says. A
// server that does not answer as a GDB stub within the handshake timeout,
// or answers something else, gives an error wrapping ErrUnavailable that
// says what it found.
func Dial(ctx context.Context, addr string, opts Options) (*Session, error) {
	if opts.HandshakeTimeout <= 0 {
		opts.HandshakeTimeout = 3 * time.Second
	}
	if opts.ReplyTimeout <= 0 {
		opts.ReplyTimeout = 10 * time.Second
	}
	if opts.Baud <= 0 {
		opts.Baud = 115200
	}
	hctx, cancel := context.WithTimeout(ctx, opts.HandshakeTimeout)
	defer cancel()
	var t transport
	network := "tcp"
	if isUnixSocket(addr) {
		network = "unix"
	}
	if network == "tcp" && isSerialAddr(addr) { // a path, but no socket
		open := opts.OpenSerial
		if open == nil {
			open = opts.Devices.OpenSerial
		}
		st, err := openSerial(addr, opts.Baud, open)
		if err != nil {
			return nil, unavailable(err, "gdb %s: open serial port", addr)
		}
		t = st
	} else {
		st, err := dialStream(hctx, opts.Dial, network, addr)
		if err != nil {
			if ctx.Err() == nil && hctx.Err() != nil {
				err = fmt.Errorf("no connection within %v", opts.HandshakeTimeout)
			}
			return nil, unavailable(err, "gdb %s: connect", addr)
		}
		t = st
	}
	s := &Session{addr: addr, opts: opts, t: t, rbuf: make([]byte, 64<<10), pktSize: 400}
	if err := s.handshake(ctx, hctx); err != nil {
		t.Close()
		return nil, err
	}
	s.ackTimer = time.AfterFunc(time.Hour, s.flushAck)
	s.ackTimer.Stop()
	s.end()
	return s, nil
}

// WasRunning reports whether the target ran when Dial attached, as
// Options.Attach decided.
func (s *Session) WasRunning() bool { return s.wasRunning }

// Addr is the address Dial was given.
func (s *Session) Addr() string { return s.addr }

// ackFlushDelay is how long an acknowledgement owed in ack mode may wait
// for a request to ride on. Stubs that resend unacknowledged packets wait
// far longer (gdb's own timeout is 2 s).
const ackFlushDelay = 10 * time.Millisecond

// end ends what begin began. In ack mode the acknowledgement of the last
// reply goes out with the next request, saving the stub a wakeup and the
// client a write per request; a timer sends it alone if none follows.
func (s *Session) end() {
	s.perReply = false
	s.t.end()
	if s.ackOwed && s.ackTimer != nil {
		s.ackTimer.Reset(ackFlushDelay)
	}
}

// flushAck sends an acknowledgement that no request took along.
func (s *Session) flushAck() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.ackOwed || s.closed || s.broken != nil || s.running {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.ReplyTimeout)
	defer cancel()
	s.t.begin(ctx, time.Time{})
	defer s.t.end()
	s.ackOwed = false
	if _, err := s.t.Write([]byte{'+'}); err != nil {
		s.broken = err
	}
}

// begin readies the session for a request under ctx, or says why it
// cannot take one.
func (s *Session) begin(ctx context.Context, what string) error {
	if s.closed {
		return fmt.Errorf("gdb %s: %s: %w", s.addr, what, ErrClosed)
	}
	if s.broken != nil {
		return unavailable(s.broken, "gdb %s: %s: the session broke earlier", s.addr, what)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("gdb %s: %s: %w", s.addr, what, context.Cause(ctx))
	}
	s.t.begin(ctx, time.Now().Add(s.opts.ReplyTimeout))
	s.perReply = true
	return nil
}

// fail turns an I/O error met while doing what into the error to return.
// After one the stream's state is unknown (a reply may still come), so the
// session takes no more requests.
func (s *Session) fail(ctx context.Context, err error, what string) error {
	var te *TargetError
	var ue usageError
	if errors.As(err, &te) || errors.Is(err, ErrNotSupported) || errors.As(err, &ue) {
		return err
	}
	s.broken = err
	if ctx.Err() != nil {
		return fmt.Errorf("gdb %s: %s: %w", s.addr, what, context.Cause(ctx))
	}
	if errors.Is(err, errTimeout) {
		err = fmt.Errorf("no reply within %v", s.opts.ReplyTimeout)
	}
	return unavailable(err, "gdb %s: %s", s.addr, what)
}

// usageError is a request refused before it was sent: the session
// remains usable.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// Close ends the session. A target that ran when Dial attached, or that
// Resume or Reset("run") set going, is left running: the session detaches
// (D), which resumes it. A target the caller halted is left halted: the
// session only closes the connection, which QEMU's stub takes without
// resuming. Close is idempotent.
func (s *Session) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	var err error
	if s.broken == nil && s.exited == "" && s.wantRunning {
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.HandshakeTimeout)
		s.t.begin(ctx, time.Time{})
		err = s.detach()
		s.t.end()
		cancel()
		if err != nil {
			err = unavailable(err, "gdb %s: detach, leaving the target running", s.addr)
		}
	}
	if s.broken != nil && s.exited == "" && s.wantRunning {
		// Best effort, so that an aborted access does not leave a
		// target halted that ran: the error that broke the session was
		// reported already.
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.HandshakeTimeout)
		s.t.begin(ctx, time.Time{})
		s.recoverDetach()
		s.t.end()
		cancel()
	}
	if s.ackTimer != nil {
		s.ackTimer.Stop()
	}
	if s.ackOwed && s.broken == nil && !s.running {
		s.ackOwed = false
		s.t.begin(context.Background(), time.Now().Add(s.opts.HandshakeTimeout))
		s.t.Write([]byte{'+'})
		s.t.end()
	}
	if cerr := s.t.Close(); err == nil && cerr != nil {
		err = unavailable(cerr, "gdb %s: close", s.addr)
	}
	return err
}

// recoverDetach detaches from a stub whose stream is in an unknown state
// (a request was aborted; its reply may still come): it stops the target
// in case it runs, sends D, and skips what arrives until a reply that can
// be D's.
func (s *Session) recoverDetach() {
	if _, err := s.t.Write(s.withAck(0x03)); err != nil {
		return
	}
	for _, req := range []string{"D", "D;1"} {
		if req == "D;1" && !s.multiprocess {
			return
		}
		if s.send([]byte(req)) != nil {
			return
		}
		for {
			p, err := s.readPacket(false)
			if err != nil {
				return
			}
			if string(p) == "OK" {
				return
			}
			if isErrorReply(p) {
				break
			}
		}
	}
}

func (s *Session) detach() error {
	if err := s.halt(); err != nil {
		return err
	}
	p, err := s.exchange([]byte("D"), false)
	if err != nil {
		return err
	}
	if isErrorReply(p) && s.multiprocess {
		// A stub in multiprocess mode wants the process: QEMU keeps the
		// mode an earlier debugger asked for.
		p, err = s.exchange([]byte("D;1"), false)
		if err != nil {
			return err
		}
	}
	if string(p) != "OK" {
		return fmt.Errorf("the stub answered detach with %q", clip(p))
	}
	return nil
}

package serialx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"go.bug.st/serial"

	"github.com/hilrun/hilrun/pkg/gate/dial"
	"github.com/hilrun/hilrun/pkg/steps"
)

// Network ports. A console's path may be a URL instead of a device:
//
//   - tcp://HOST:PORT, a raw socket carrying the serial bytes unchanged
//     (ser2net's "accepter: tcp,PORT"). The server owns the line settings,
//     and there are no modem lines or break.
//   - rfc2217://HOST:PORT, telnet with the Com Port Control Option of RFC
//     2217 (ser2net's "accepter: telnet(rfc2217),tcp,PORT"): the console
//     sets baud rate, data bits, parity, stop bits and flow control, and
//     drives DTR, RTS and break through the server.
//
// Everything above the port (the reader, logs, reconnection, hand-over,
// leases) is the same as for a local port: a network port implements
// serial.Port. This file holds the connection and its data; telnet.go
// decodes telnet, and rfc2217.go holds the serial port control.

const (
	schemeTCP     = steps.SchemeTCP
	schemeRFC2217 = steps.SchemeRFC2217

	// netHandshakeTimeout bounds connecting and the telnet negotiation
	// when a network port opens.
	netHandshakeTimeout = 10 * time.Second
	// netAckTimeout bounds the wait for the server's acknowledgement of
	// one RFC 2217 command.
	netAckTimeout = 5 * time.Second
	// netQueueMax bounds the received bytes a network port holds for a
	// Read that has not come yet; beyond it the port stops reading the
	// socket, so TCP flow control holds the server back and nothing is
	// dropped.
	netQueueMax = 1 << 20
)

// rawSocketError is what modem control and line settings return on a
// tcp:// port. It wraps ErrNoModemLines.
type rawSocketError struct {
	url  string
	what string // "modem lines", "break", "flow control"
}

func (e *rawSocketError) Error() string {
	return fmt.Sprintf("%s is a raw socket: it has no %s; use rfc2217://", e.url, e.what)
}

func (e *rawSocketError) Is(target error) bool { return target == ErrNoModemLines }

// errNetClosed is the error of a Read or Write after the port's own Close.
var errNetClosed = errors.New("network port closed")

// netPort is a serial.Port over TCP, raw or telnet with RFC 2217. A
// goroutine reads the socket, decodes telnet and queues the data for Read
// (at most netQueueMax bytes); it answers option negotiation and hands the
// server's acknowledgements to the command waiting for them, so that
// commands are confirmed even when no Read is in progress (as while the
// console opens the port).
type netPort struct {
	url    string // as given, for messages
	telnet bool
	conn   net.Conn

	wmu sync.Mutex // serializes writes to conn: data and telnet commands

	qmu     sync.Mutex
	queue   []byte // received data; queue[head:] is not read yet
	head    int
	qerr    error         // why the socket stopped; set once
	ready   chan struct{} // signalled (cap 1) when queue grows or qerr is set
	space   chan struct{} // signalled (cap 1) when Read drains the queue
	done    chan struct{} // closed when the reading goroutine ends
	rtmu    sync.Mutex
	timeout time.Duration // of Read; <0 waits for data

	// Counts for CatchUp (see arrived): raw bytes the socket reads took,
	// counted under smu with the read; raw bytes decoded and queued (fed)
	// and the data bytes they gave (queued), under qmu; progress is closed
	// when fed grows, nil while nobody waits for it.
	rc       syscall.RawConn // conn's, nil when reads go through conn.Read
	smu      sync.Mutex
	taken    int64
	fed      int64
	queued   int64
	progress chan struct{}

	closed    chan struct{}
	closeOnce sync.Once
	// abort is closed by ResetOutputBuffer: writes and commands waiting
	// for the server stop, so the console can take its lock and close.
	abort     chan struct{}
	abortOnce sync.Once

	// Telnet state, guarded by tmu.
	tmu      sync.Mutex
	opts     [256]telnetOpt
	settled  chan struct{} // closed when no option we asked about is pending
	waiters  []*ackWaiter
	modem    byte // last NOTIFY-MODEMSTATE
	suspend  bool // the server asked us to stop sending (FLOWCONTROL-SUSPEND)
	resumed  chan struct{}
	crPend   bool // a CR was the last data byte (for CR NUL without BINARY)
	received telnetCounters
}

// openNetPort connects to the network port url and, for rfc2217://,
// negotiates telnet options and sets mode. It returns an *OpenError.
func openNetPort(ctx context.Context, gate dial.Policy, url string, mode *serial.Mode) (*netPort, error) {
	scheme, addr, err := steps.ParsePortURL(url)
	if err != nil {
		return nil, &OpenError{Path: url, Kind: Invalid, Err: err}
	}
	hctx, cancel := context.WithTimeout(ctx, netHandshakeTimeout)
	defer cancel()
	conn, err := gate.Dial(hctx, dial.Console, "tcp", addr)
	if err != nil {
		return nil, &OpenError{Path: url, Kind: kindOfDial(err), Err: fmt.Errorf("connect to %s: %w", addr, err)}
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.SetNoDelay(true) // a typed command goes out at once
	}
	p := &netPort{
		url:     url,
		telnet:  scheme == schemeRFC2217,
		conn:    conn,
		ready:   make(chan struct{}, 1),
		space:   make(chan struct{}, 1),
		done:    make(chan struct{}),
		closed:  make(chan struct{}),
		abort:   make(chan struct{}),
		settled: make(chan struct{}),
		resumed: make(chan struct{}),
		timeout: -1,
	}
	close(p.resumed)
	if sc, ok := conn.(syscall.Conn); ok && countable {
		p.rc, _ = sc.SyscallConn()
	}
	var requests []byte
	if p.telnet {
		requests = p.requests()
	}
	go p.readSocket()
	if !p.telnet {
		return p, nil
	}
	stop := context.AfterFunc(hctx, func() { p.Close() })
	err = p.negotiate(hctx, requests)
	if err == nil {
		err = p.SetMode(mode)
	}
	if !stop() || hctx.Err() != nil {
		err = fmt.Errorf("negotiate telnet with %s: %w", addr, ctxErr(hctx))
	} else if err != nil && p.endedSoon(err) {
		err = p.endedErr()
	}
	if err != nil {
		p.Close()
		kind := Other
		if strings.Contains(err.Error(), "in use") {
			kind = Busy
		}
		return nil, &OpenError{Path: url, Kind: kind, Err: err}
	}
	return p, nil
}

func kindOfDial(err error) OpenErrorKind {
	var dns *net.DNSError
	if errors.As(err, &dns) && dns.IsNotFound {
		return NotFound
	}
	return Other
}

// readSocket reads the socket until it fails or closes, decoding telnet
// when the port speaks it.
func (p *netPort) readSocket() {
	defer close(p.done)
	buf := make([]byte, 32<<10)
	var tp telnetParser
	for {
		n, err := p.readConn(buf)
		if n > 0 {
			data := buf[:n]
			if p.telnet {
				data = tp.feed(p, data)
			}
			if len(data) > 0 && !p.enqueue(data) {
				return
			}
			p.qmu.Lock()
			p.fed += int64(n)
			p.progressLocked()
			p.qmu.Unlock()
		}
		if err != nil {
			select {
			case <-p.closed:
				err = errNetClosed
			default:
				if errors.Is(err, io.EOF) {
					err = fmt.Errorf("%s: the server closed the connection", p.url)
				} else {
					err = fmt.Errorf("%s: %w", p.url, err)
				}
			}
			p.qmu.Lock()
			p.qerr = err
			p.progressLocked()
			p.qmu.Unlock()
			signal(p.ready)
			p.failWaiters()
			return
		}
	}
}

func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// enqueue appends data for Read, waiting while the queue is full; it
// returns false when the port closed meanwhile.
func (p *netPort) enqueue(data []byte) bool {
	for {
		p.qmu.Lock()
		if len(p.queue)-p.head < netQueueMax {
			if p.head > 0 && p.head >= len(p.queue)/2 {
				p.queue = p.queue[:copy(p.queue, p.queue[p.head:])]
				p.head = 0
			}
			p.queue = append(p.queue, data...)
			p.queued += int64(len(data))
			p.qmu.Unlock()
			signal(p.ready)
			return true
		}
		p.qmu.Unlock()
		select {
		case <-p.space:
		case <-p.closed:
			return false
		}
	}
}

// ended reports whether the connection has ended.
func (p *netPort) ended() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// endedSoon reports whether the connection has ended, giving the reader
// a second to see the end when err is a write the server reset: the
// server's last words arrive before its reset.
func (p *netPort) endedSoon(err error) bool {
	if !isGone(err) {
		return p.ended()
	}
	t := time.NewTimer(time.Second)
	defer t.Stop()
	select {
	case <-p.done:
		return true
	case <-t.C:
		return false
	}
}

// endedErr says how the connection ended while it was being set up,
// quoting what the server said: a server that turns a connection away
// says why as text, as ser2net's "Port's device already in use".
func (p *netPort) endedErr() error {
	p.qmu.Lock()
	said := strings.TrimSpace(string(p.queue[p.head:min(len(p.queue), p.head+200)]))
	p.qmu.Unlock()
	if said != "" {
		return fmt.Errorf("%w: it said %q", p.socketErr(), said)
	}
	return p.socketErr()
}

func (p *netPort) socketErr() error {
	p.qmu.Lock()
	defer p.qmu.Unlock()
	if p.qerr == nil {
		return fmt.Errorf("%s: the connection ended", p.url)
	}
	return p.qerr
}

// Read returns queued data; (0, nil) when the read timeout passes without
// any, as go.bug.st/serial does; an error once the connection ended and
// the queue is empty.
func (p *netPort) Read(b []byte) (int, error) {
	p.rtmu.Lock()
	timeout := p.timeout
	p.rtmu.Unlock()
	var expire <-chan time.Time
	if timeout >= 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expire = t.C
	}
	for {
		p.qmu.Lock()
		if p.head < len(p.queue) {
			n := copy(b, p.queue[p.head:])
			p.head += n
			if p.head == len(p.queue) {
				p.queue, p.head = p.queue[:0], 0
			}
			p.qmu.Unlock()
			signal(p.space)
			return n, nil
		}
		err := p.qerr
		p.qmu.Unlock()
		select {
		case <-p.closed:
			return 0, errNetClosed
		default:
		}
		if err != nil {
			return 0, err
		}
		select {
		case <-p.ready:
		case <-p.closed:
			return 0, errNetClosed
		case <-expire:
			return 0, nil
		}
	}
}

// Write sends b, escaping IAC (and CR without BINARY) on a telnet port. It
// waits while the server has suspended our output (RFC 2217
// FLOWCONTROL-SUSPEND).
func (p *netPort) Write(b []byte) (int, error) {
	out := b
	if p.telnet {
		p.tmu.Lock()
		binary, resumed := p.opts[optBinary].us, p.resumed
		p.tmu.Unlock()
		select {
		case <-resumed:
		case <-p.closed:
			return 0, errNetClosed
		case <-p.abort:
			return 0, fmt.Errorf("%s: output discarded while the server had suspended it", p.url)
		}
		out = make([]byte, 0, len(b)+len(b)/16+2)
		for _, c := range b {
			switch {
			case c == tnIAC:
				out = append(out, tnIAC, tnIAC)
			case c == '\r' && !binary:
				out = append(out, '\r', 0)
			default:
				out = append(out, c)
			}
		}
	}
	if err := p.writeRaw(out); err != nil {
		return 0, err
	}
	return len(b), nil
}

func (p *netPort) writeRaw(b []byte) error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	select {
	case <-p.closed:
		return errNetClosed
	default:
	}
	if _, err := p.conn.Write(b); err != nil {
		return fmt.Errorf("%s: %w", p.url, err)
	}
	return nil
}

// ResetInputBuffer drops the received data not yet read and, over RFC
// 2217, asks the server to purge its receive buffer (PURGE-DATA 1).
func (p *netPort) ResetInputBuffer() error {
	p.qmu.Lock()
	p.queue, p.head = p.queue[:0], 0
	p.qmu.Unlock()
	signal(p.space)
	if !p.telnet {
		return nil
	}
	return p.setting(cpPurgeData, 1, "purge the receive buffer")
}

// ResetOutputBuffer makes a write stuck on a full socket (the server not
// reading) or on a server's FLOWCONTROL-SUSPEND, and a command waiting for
// its acknowledgement, return at once. The console calls it only before
// closing or releasing the port, so later writes fail too; the server's
// own buffer is not purged.
func (p *netPort) ResetOutputBuffer() error {
	p.abortOnce.Do(func() { close(p.abort) })
	return p.conn.SetWriteDeadline(time.Now())
}

// Drain returns at once: TCP gives no word of when the server has sent
// the bytes on.
func (p *netPort) Drain() error { return nil }

// SetReadTimeout sets how long Read waits for data; serial.NoTimeout (or
// any negative value) waits until data or an error.
func (p *netPort) SetReadTimeout(t time.Duration) error {
	p.rtmu.Lock()
	defer p.rtmu.Unlock()
	p.timeout = t
	return nil
}

// Close closes the connection; a Read in progress returns an error. It is
// idempotent.
func (p *netPort) Close() error {
	var err error
	p.closeOnce.Do(func() {
		close(p.closed)
		err = p.conn.Close()
		<-p.done
	})
	return err
}

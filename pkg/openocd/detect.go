package openocd

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"time"
)

// What a connection opens with. Before its handshake, a Session sends one
// line that every server it may meet answers at once, each in its own way:
//
//	# $?#3f SUB LF
//
// To OpenOCD's telnet server it is a Tcl comment, and the server had
// already greeted with telnet option negotiation (IAC ...) on accepting
// the connection; it ignores the SUB (0x1a). To OpenOCD's Tcl RPC server it
// is a comment ended by SUB, answered by an empty result and SUB; the LF
// starts the next request, harmlessly. A GDB stub skips bytes until "$"
// and reads "$?#3f", a well-formed "?" packet (why the target stopped),
// which it acknowledges with "+". So the first byte back says who
// answers, and a Session pointed at a GDB stub fails at once, saying so,
// rather than waiting for a reply that never comes.
const probeLine = "# $?#3f\x1a\n"

// Who answered the probe.
const (
	peerUnknown = iota
	peerTelnet  // OpenOCD's telnet server
	peerRPC     // OpenOCD's Tcl RPC server
	peerGDB     // a GDB remote protocol stub
)

// classify says who sent first, the first bytes a connection received
// after the probe.
func classify(first []byte) int {
	if len(first) == 0 {
		return peerUnknown
	}
	switch first[0] {
	case iac:
		return peerTelnet
	case sub:
		return peerRPC
	case '+', '-', '$':
		return peerGDB
	}
	return peerUnknown
}

// gdbDetach is the GDB remote packet "D", detach. A stub such as QEMU's
// stops the target when a debugger connects and leaves it stopped when the
// connection merely closes; detaching lets it run again.
const gdbDetach = "$D#44"

// detachWait bounds how long a Session waits for a GDB stub to acknowledge
// the detach before it closes the connection anyway.
const detachWait = 2 * time.Second

// detect sends the probe on c and reads until the first bytes arrive. It
// returns them, for the transport's decoder, or an error naming the
// server that answered when it is not the one t talks to. A GDB stub is
// detached from before the error returns.
func (s *Session) detect(ctx context.Context, c *conn) ([]byte, error) {
	disarm := armDeadline(ctx, c.Conn)
	defer disarm()
	if _, err := c.Write([]byte(probeLine)); err != nil {
		return nil, err
	}
	n, err := c.Read(c.buf)
	if n == 0 {
		return nil, err
	}
	first := c.buf[:n]
	switch peer := classify(first); {
	case peer == peerGDB:
		detachGDB(ctx, c.Conn, first)
		return nil, &wrongServerError{msg: fmt.Sprintf("openocd at %s: %s speaks the GDB remote protocol, not OpenOCD's: use gdb: %s", s.shown, s.addr, s.addr)}
	case peer == peerRPC && s.tr == Telnet:
		return nil, &wrongServerError{msg: fmt.Sprintf("openocd at %s: %s is OpenOCD's Tcl RPC server, not its telnet server: use openocd: tcl://%s", s.shown, s.addr, s.addr)}
	case peer == peerTelnet && s.tr == TclRPC:
		return nil, &wrongServerError{msg: fmt.Sprintf("openocd at %s: %s is OpenOCD's telnet server, not its Tcl RPC server: use openocd: %s", s.shown, s.addr, s.addr)}
	case peer == peerUnknown && s.tr == TclRPC:
		return nil, &wrongServerError{msg: fmt.Sprintf("openocd at %s: %s does not answer as OpenOCD's Tcl RPC server does (it sent %q)", s.shown, s.addr, abbreviate(string(first)))}
	}
	// A telnet server that is not OpenOCD's gets the benefit of the
	// doubt, as before: the handshake tells.
	return append([]byte(nil), first...), nil
}

// detachGDB detaches from the GDB stub on c, whose first bytes were
// first, and waits a little for its answer: the target then runs again.
func detachGDB(ctx context.Context, c net.Conn, first []byte) {
	dl := time.Now().Add(detachWait)
	if d, ok := ctx.Deadline(); ok && d.Before(dl) {
		dl = d
	}
	c.SetDeadline(dl)
	got := append([]byte(nil), first...)
	// The stub answered the probe: "+", then a stop reply packet. Read
	// it whole, so that the "+" acknowledging it goes at the right time.
	for !bytes.Contains(got, []byte("#")) || bytes.LastIndexByte(got, '#')+3 > len(got) {
		if !readMore(c, &got) {
			return
		}
	}
	if _, err := c.Write([]byte("+" + gdbDetach)); err != nil {
		return
	}
	for !bytes.Contains(got, []byte("$OK#9a")) {
		if !readMore(c, &got) {
			return
		}
	}
}

func readMore(c net.Conn, got *[]byte) bool {
	var b [256]byte
	n, err := c.Read(b[:])
	*got = append(*got, b[:n]...)
	return err == nil && len(*got) < 64<<10
}

// armDeadline makes I/O on c end at ctx's deadline or when ctx is done.
// disarm returns once nothing can touch c's deadline any more.
func armDeadline(ctx context.Context, c net.Conn) (disarm func()) {
	if dl, ok := ctx.Deadline(); ok {
		c.SetDeadline(dl)
	} else {
		c.SetDeadline(time.Time{})
	}
	woke := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		c.SetDeadline(aLongTimeAgo)
		close(woke)
	})
	return func() {
		if !stop() {
			<-woke // so that it cannot touch the next request's deadline
		}
	}
}

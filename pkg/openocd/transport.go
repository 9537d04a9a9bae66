package openocd

import (
	"errors"
	"fmt"
	"net"
	"strings"
)

// Transport is the OpenOCD server a Session talks to.
type Transport int

const (
	// Telnet is OpenOCD's telnet server (telnet_port, 4444 by default):
	// always there, but it echoes every character of a request, one
	// write system call each, which makes it the slower of the two.
	Telnet Transport = iota + 1
	// TclRPC is OpenOCD's Tcl RPC server (tcl_port, 6666 by default):
	// a request is Tcl ended by the byte 0x1a, its reply the result ended
	// by 0x1a, with no echo. It does not pass on the messages OpenOCD
	// logs while idle (state changes caused by another client, say):
	// a Session over it sees those a command logs, which it captures.
	TclRPC
)

func (t Transport) String() string {
	switch t {
	case Telnet:
		return "telnet"
	case TclRPC:
		return "tcl"
	}
	return fmt.Sprintf("Transport(%d)", int(t))
}

// Address schemes Dial understands.
const (
	tclScheme    = "tcl://"
	telnetScheme = "telnet://"
)

// SplitAddr reads an address as Dial takes it: "tcl://HOST:PORT" is
// OpenOCD's Tcl RPC server, "telnet://HOST:PORT" its telnet server, and
// a bare "HOST:PORT" whichever def says (Telnet when def is 0). It
// returns HOST:PORT and the transport.
func SplitAddr(addr string, def Transport) (hostport string, t Transport, err error) {
	t = def
	if t == 0 {
		t = Telnet
	}
	switch {
	case hasPrefixFold(addr, tclScheme):
		addr, t = addr[len(tclScheme):], TclRPC
	case hasPrefixFold(addr, telnetScheme):
		addr, t = addr[len(telnetScheme):], Telnet
	case strings.Contains(addr, "://"):
		scheme, _, _ := strings.Cut(addr, "://")
		return "", 0, fmt.Errorf("openocd address %q: unknown scheme %q: want HOST:PORT, tcl://HOST:PORT or telnet://HOST:PORT", addr, scheme)
	}
	if _, _, err := net.SplitHostPort(addr); err != nil {
		return "", 0, fmt.Errorf("openocd address %q: want HOST:PORT, tcl://HOST:PORT or telnet://HOST:PORT: %w", addr, err)
	}
	return addr, t, nil
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// JoinAddr returns the address that Dial reads as hostport over t: a
// tcl:// address for TclRPC, hostport itself for Telnet.
func JoinAddr(hostport string, t Transport) string {
	if t == TclRPC {
		return tclScheme + hostport
	}
	return hostport
}

// ErrWrongServer is wrapped by the error of a Session whose address
// answers, but not as the OpenOCD server it expected: a GDB stub, or
// OpenOCD's other server. The error says which address to use instead.
// Retrying does not help, so a Session does not.
var ErrWrongServer = errors.New("not the expected openocd server")

// wrongServerError is an error wrapping ErrWrongServer.
type wrongServerError struct{ msg string }

func (e *wrongServerError) Error() string { return e.msg }
func (e *wrongServerError) Unwrap() error { return ErrWrongServer }

// BenchFault reports that the bench, not the target, is at fault: the
// probe's address points at the wrong server.
func (e *wrongServerError) BenchFault() bool { return true }

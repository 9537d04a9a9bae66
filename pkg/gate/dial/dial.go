// Package dial is hilrun's one gate for connecting to an address: network
// consoles (tcp://, rfc2217://), debugger servers (OpenOCD's telnet and
// Tcl ports, GDB remote stubs, QEMU's GDB socket) and the servers hilrun
// launched itself. Nothing else in hilrun dials (a test walks the source
// to keep it so); each connection asks a Policy first. The zero Policy
// dials nothing.
package dial

import (
	"context"
	"errors"
	"fmt"
	"net"
)

// Purpose says what a connection is for; a Policy decides by it.
type Purpose int

const (
	// Console is a network console: a serial port behind ser2net or an
	// RFC 2217 server.
	Console Purpose = iota + 1
	// Probe is a debugger server a probe attaches to: a running OpenOCD,
	// a GDB remote stub, QEMU's GDB socket.
	Probe
	// Launched is a server hilrun started itself and dials on the loopback
	// port it announced (an OpenOCD launched for a probe).
	Launched
)

func (p Purpose) String() string {
	switch p {
	case Console:
		return "network console"
	case Probe:
		return "debugger"
	case Launched:
		return "launched server"
	}
	return fmt.Sprintf("purpose %d", int(p))
}

// Target is a connection about to be made, as a Policy sees it.
type Target struct {
	Purpose Purpose
	// Network is "tcp" or "unix"; Address is host:port or a socket's path.
	Network, Address string
}

// ErrRefused is wrapped by the refusal of a Policy without an Allow.
var ErrRefused = errors.New("refused by the dial policy")

// Policy says which addresses may be dialled.
type Policy struct {
	// Allow is asked before every connection; an error refuses it.
	Allow func(Target) error
}

// Anywhere is the policy of the user's own command line: any address.
func Anywhere() Policy { return Policy{Allow: func(Target) error { return nil }} }

// Dial connects to address on network for purpose once the policy allowed
// it; ctx bounds the connecting only.
func (p Policy) Dial(ctx context.Context, purpose Purpose, network, address string) (net.Conn, error) {
	t := Target{Purpose: purpose, Network: network, Address: address}
	if p.Allow == nil {
		return nil, fmt.Errorf("dial %s %s: %w: hilrun was wired without one", t.Purpose, address, ErrRefused)
	}
	if err := p.Allow(t); err != nil {
		return nil, err
	}
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}

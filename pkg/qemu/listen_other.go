//go:build !linux

package qemu

import (
	"errors"
	"net"
	"strconv"
	"syscall"
)

const syscallNoctty = 0

// listening reports whether something listens on port of 127.0.0.1: a
// listener of our own cannot bind it then. (Connecting would stop QEMU's
// guest.) Should QEMU try to bind the port in the moment ours holds it,
// QEMU exits saying so and Start tries another port.
func listening(pid, port int) bool {
	ln, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err == nil {
		ln.Close()
		return false
	}
	return errors.Is(err, syscall.EADDRINUSE)
}

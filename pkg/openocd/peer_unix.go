//go:build linux || darwin || freebsd || netbsd || openbsd

package openocd

import (
	"errors"
	"net"
	"syscall"
)

// peerClosed reports whether the server closed its end of c, an idle
// connection, or reset it: a peek at the socket, which does not wait. It
// is false when it cannot tell, as for a connection that is not a socket.
func peerClosed(c net.Conn) bool {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	closed := false
	var b [1]byte
	rc.Read(func(fd uintptr) bool {
		n, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case err == nil:
			closed = n == 0 // end of file; n > 0 is data waiting, a live peer
		case errors.Is(err, syscall.EAGAIN), errors.Is(err, syscall.EWOULDBLOCK), errors.Is(err, syscall.EINTR):
		default:
			closed = true // reset, say
		}
		return true
	})
	return closed
}

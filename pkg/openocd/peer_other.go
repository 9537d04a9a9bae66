//go:build !(linux || darwin || freebsd || netbsd || openbsd)

package openocd

import "net"

// peerClosed reports whether the server closed its end of c; on this
// system it cannot tell, and says no: a request sent on a connection the
// server closed then fails as one whose effect is unknown.
func peerClosed(c net.Conn) bool { return false }

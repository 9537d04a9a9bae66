//go:build linux

package serialx

import (
	"errors"
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// countable says that a network port's socket is read through its raw
// descriptor, so that it can count what it takes (see netPort.arrived).
const countable = true

// readConn reads the socket into buf, counting what it takes under smu so
// that rawReceived sees every byte once: in the socket or counted.
func (p *netPort) readConn(buf []byte) (int, error) {
	if p.rc == nil {
		return p.conn.Read(buf)
	}
	var n int
	var rerr error
	err := p.rc.Read(func(fd uintptr) bool {
		for {
			p.smu.Lock()
			n, rerr = unix.Read(int(fd), buf)
			if n > 0 {
				p.taken += int64(n)
			}
			p.smu.Unlock()
			if rerr != unix.EINTR {
				return rerr != unix.EAGAIN
			}
		}
	})
	switch {
	case err != nil:
		return 0, err
	case rerr != nil:
		return 0, os.NewSyscallError("read", rerr)
	case n == 0:
		return 0, io.EOF
	}
	return n, nil
}

// rawReceived returns the raw bytes the socket's reads took plus those it
// holds (FIONREAD, which on Linux is TIOCINQ).
func (p *netPort) rawReceived() (int64, error) {
	var n int64
	var ierr error
	err := p.rc.Control(func(fd uintptr) {
		p.smu.Lock()
		defer p.smu.Unlock()
		q, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ)
		n, ierr = p.taken+int64(q), err
	})
	if err = errors.Join(err, ierr); err != nil {
		return 0, fmt.Errorf("ask the socket what it holds: %w", err)
	}
	return n, nil
}

package serialx

import (
	"go.bug.st/serial"
	"golang.org/x/sys/unix"
)

// outputQueued is how many bytes written to port the driver has not sent
// yet; false when port has no descriptor to ask.
func outputQueued(port serial.Port) (int, bool) {
	fd, err := portFD(port)
	if err != nil {
		return 0, false
	}
	n, err := unix.IoctlGetInt(fd, unix.TIOCOUTQ)
	return n, err == nil
}

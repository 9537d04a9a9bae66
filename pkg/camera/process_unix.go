//go:build unix

package camera

import (
	"os"
	"syscall"
)

// killGroup kills ffmpeg's process group. SIGKILL rather than SIGTERM: a
// camera stuck in a driver call may not let ffmpeg act on SIGTERM, and
// -atomic_writing means no frame is left half written.
func killGroup(p *os.Process) error {
	if err := syscall.Kill(-p.Pid, syscall.SIGKILL); err != nil {
		return p.Kill()
	}
	return nil
}

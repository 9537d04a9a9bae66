//go:build unix

package openocd

import (
	"os"
	"syscall"
)

// terminateGroup asks OpenOCD's process group to exit.
func terminateGroup(p *os.Process) {
	if syscall.Kill(-p.Pid, syscall.SIGTERM) != nil {
		p.Signal(syscall.SIGTERM)
	}
}

// killGroup kills OpenOCD's process group. It is harmless once the group
// is gone.
func killGroup(p *os.Process) {
	if syscall.Kill(-p.Pid, syscall.SIGKILL) != nil {
		p.Kill()
	}
}

package jtag

import (
	"os/exec"
	"syscall"
)

// setProcAttr makes the kernel kill cmd if the test binary dies first, so
// an interrupted test leaves no OpenOCD behind.
func setProcAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

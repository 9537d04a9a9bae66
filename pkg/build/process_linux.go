package build

import "syscall"

// sysProcAttr puts the command in a process group of its own, so that the
// group can be ended as one, and has the kernel kill the command if hilrun
// dies first.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

package openocd

import "syscall"

// sysProcAttr puts OpenOCD in a process group of its own, so that Stop
// can end the group, and has the kernel kill it when hilrun dies, so that
// no OpenOCD outlives the run holding the probe.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

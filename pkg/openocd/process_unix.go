//go:build unix && !linux

package openocd

import "syscall"

// sysProcAttr puts OpenOCD in a process group of its own, so that Stop
// can end the group. Only Linux can also have it killed when hilrun dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

//go:build unix && !linux

package build

import "syscall"

// sysProcAttr puts the command in a process group of its own, so that the
// group can be ended as one.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

//go:build unix && !linux

package camera

import "syscall"

// sysProcAttr puts ffmpeg in a process group of its own, so that the group
// can be killed as one.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

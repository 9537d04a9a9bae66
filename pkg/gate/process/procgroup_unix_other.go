//go:build unix && !linux

package process

import "syscall"

// Only Linux can have a child killed when its parent dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

package camera

import "syscall"

// sysProcAttr puts ffmpeg in a process group of its own, so that the group
// can be killed as one, and has the kernel kill ffmpeg if hilrun dies
// first, which would otherwise leave the camera held open.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

//go:build !unix

package camera

import (
	"os"
	"syscall"
)

// sysProcAttr has nothing to set where there are no process groups.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// killGroup kills ffmpeg, which starts no children of its own.
func killGroup(p *os.Process) error { return p.Kill() }

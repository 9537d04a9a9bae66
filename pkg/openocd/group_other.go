//go:build !unix

package openocd

import (
	"os"
	"syscall"
)

// sysProcAttr has nothing to set where there are no process groups.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// terminateGroup ends OpenOCD; without signals it cannot ask politely.
func terminateGroup(p *os.Process) { p.Kill() }

// killGroup kills OpenOCD.
func killGroup(p *os.Process) { p.Kill() }

//go:build !unix

package build

import (
	"os"
	"syscall"
)

// sysProcAttr has nothing to set where there are no process groups.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// terminateGroup ends the process; without signals it cannot ask politely.
func terminateGroup(p *os.Process) { p.Kill() }

// killGroup kills the process.
func killGroup(p *os.Process) { p.Kill() }

// exitCode is the process's exit status.
func exitCode(ps *os.ProcessState) int { return ps.ExitCode() }

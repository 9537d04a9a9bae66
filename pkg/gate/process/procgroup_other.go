//go:build !unix

package process

import (
	"os"
	"syscall"
)

// Without process groups a command is killed alone.
func sysProcAttr() *syscall.SysProcAttr { return nil }
func terminate(p *os.Process)           { p.Kill() }
func kill(p *os.Process) error          { return p.Kill() }
func exitCode(ps *os.ProcessState) int  { return ps.ExitCode() }

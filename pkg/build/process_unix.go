//go:build unix

package build

import (
	"os"
	"syscall"
)

// terminateGroup asks the process's group to exit.
func terminateGroup(p *os.Process) {
	if syscall.Kill(-p.Pid, syscall.SIGTERM) != nil {
		p.Signal(syscall.SIGTERM)
	}
}

// killGroup kills the process's group. It is harmless once the group is
// gone.
func killGroup(p *os.Process) {
	if syscall.Kill(-p.Pid, syscall.SIGKILL) != nil {
		p.Kill()
	}
}

// exitCode is the exit status, or 128+N for a process that signal N ended,
// as a shell reports it.
func exitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

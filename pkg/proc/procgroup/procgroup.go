// Package procgroup runs the programs hilrun starts (OpenOCD, build and
// upload tools, host commands, ffmpeg) in process groups of their own, so
// that a timeout, a cancellation or hilrun's own exit ends everything they
// started, and nothing is left holding a probe, a port or a camera.
package procgroup

import (
	"os"
	"syscall"
)

// SysProcAttr puts a command in a process group of its own; on Linux the
// kernel also kills it when hilrun dies. Set it as exec.Cmd.SysProcAttr.
func SysProcAttr() *syscall.SysProcAttr { return sysProcAttr() }

// Terminate asks p's group to exit (SIGTERM); where there are no process
// groups it kills p.
func Terminate(p *os.Process) { terminate(p) }

// Kill kills p's group (SIGKILL). It is harmless once the group is gone.
func Kill(p *os.Process) error { return kill(p) }

// ExitCode is the exit status, or 128+N for a process that signal N ended,
// as a shell reports it.
func ExitCode(ps *os.ProcessState) int { return exitCode(ps) }

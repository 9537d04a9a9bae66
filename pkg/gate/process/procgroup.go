// Package process is hilrun's one gate for starting programs: host
// commands, build and upload tools, PlatformIO, OpenOCD, QEMU and ffmpeg
// all start here (a test walks the source so that nothing else imports
// os/exec), under a Policy that says what may start and with which
// environment. Every program runs in a process group of its own, so that
// a timeout, a cancellation or hilrun's own exit ends everything it
// started, and nothing is left holding a probe, a port or a camera.
package process

import "os"

// Terminate asks p's group to exit (SIGTERM); where there are no process
// groups it kills p.
func Terminate(p *os.Process) { terminate(p) }

// Kill kills p's group (SIGKILL). It is harmless once the group is gone.
func Kill(p *os.Process) error { return kill(p) }

// ExitCode is the exit status, or 128+N for a process that signal N ended,
// as a shell reports it.
func ExitCode(ps *os.ProcessState) int { return exitCode(ps) }

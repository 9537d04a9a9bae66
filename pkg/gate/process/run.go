package process

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"
)

// Runner runs host programs to completion through its Policy: the
// build.Runner and runner.HostRunner that hilrun's benches use. Each
// program runs watched in a process group of its own: when ctx ends the
// group gets SIGTERM, then SIGKILL after Grace; when the program exits,
// whatever it left running in its group is killed, so a build leaves no
// orphans (compilers, esptool) behind holding files or ports.
type Runner struct {
	Policy Policy
	// Purpose is what its programs are for; 0 means HostCommand.
	Purpose Purpose
	// Grace is how long the group has to exit after SIGTERM; 0 means 2s.
	Grace time.Duration
}

// Run runs argv in dir, env added to the policy's environment, its
// standard output and standard error both to out. exitCode is the exit
// status, 128+N when signal N ended it, and -1 when it did not run or did
// not finish. err is non-nil only when the program could not be started
// (wrapping ErrNotFound when it is not installed, or the policy's
// refusal) or was stopped because ctx ended (wrapping ctx.Err()).
func (r Runner) Run(ctx context.Context, argv []string, dir string, env []string, out io.Writer) (exitCode int, err error) {
	if len(argv) == 0 {
		return -1, errors.New("run: empty command")
	}
	if err := ctx.Err(); err != nil {
		return -1, fmt.Errorf("run %s: %w", argv[0], err)
	}
	grace := r.Grace
	if grace <= 0 {
		grace = 2 * time.Second
	}
	purpose := r.Purpose
	if purpose == 0 {
		purpose = HostCommand
	}
	// Watched, so that what the command starts dies with hilrun even when
	// hilrun is killed; a grandchild holding the output pipe must not keep
	// Wait waiting once the program itself has exited.
	p, err := r.Policy.Start(Spec{Purpose: purpose, Argv: argv, Dir: dir, Env: env, Stdout: out, Stderr: out, Watch: true, WaitDelay: grace})
	if err != nil {
		return -1, fmt.Errorf("run %s: %w", argv[0], err)
	}
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		p.Terminate()
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			p.Kill()
		}
	}()
	werr := p.Wait()
	p.Kill()
	close(done)
	<-stopped
	if ctx.Err() != nil {
		return -1, fmt.Errorf("run %s: %w", argv[0], ctx.Err())
	}
	var exitErr *ExitError
	switch {
	case werr == nil, errors.Is(werr, ErrWaitDelay):
		return ExitCode(p.State()), nil
	case errors.As(werr, &exitErr):
		return ExitCode(exitErr.ProcessState), nil
	}
	return -1, fmt.Errorf("run %s: %w", argv[0], werr)
}

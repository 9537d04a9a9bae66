package build

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/proc/procgroup"
)

// Runner runs one process to completion. argv[0] is looked up on PATH, or in
// dir when it is a relative path such as ./build.sh; dir is its working
// directory ("" for the current one); env holds KEY=VALUE
// entries added to the runner's own environment. Standard output and
// standard error both go to out.
//
// exitCode is the process's exit status, 128+N when signal N ended it, and
// -1 when it did not run or did not finish. err is non-nil only when the
// process could not be started (wrapping exec.ErrNotFound when argv[0] is
// not installed) or was stopped because ctx ended (wrapping ctx.Err()); a
// process that ran and failed returns its exit code and a nil error.
type Runner interface {
	Run(ctx context.Context, argv []string, dir string, env []string, out io.Writer) (exitCode int, err error)
}

// ExecRunner is the Runner hilrun uses: os/exec, with the process in a
// process group of its own. When ctx ends the group gets SIGTERM, then
// SIGKILL after Grace; when the process exits, whatever it left running in
// its group is killed, so a build leaves no orphans (compilers, esptool)
// behind holding files or ports.
type ExecRunner struct {
	// Grace is how long the group has to exit after SIGTERM; 0 means 2s.
	Grace time.Duration
	// Environ is the environment the env entries of Run are added to;
	// nil means hilrun's own (os.Environ).
	Environ []string
}

var _ Runner = ExecRunner{}

// Run implements Runner.
func (r ExecRunner) Run(ctx context.Context, argv []string, dir string, env []string, out io.Writer) (int, error) {
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
	// A program named by a relative path (./build.sh) is in dir, where the
	// command runs, not in hilrun's working directory.
	name := argv[0]
	if dir != "" && !filepath.IsAbs(name) && strings.ContainsRune(name, filepath.Separator) {
		name = filepath.Join(dir, name)
	}
	path, err := exec.LookPath(name)
	if err != nil {
		return -1, fmt.Errorf("run %s: %w", argv[0], err)
	}
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Dir = dir
	base := r.Environ
	if base == nil {
		base = os.Environ()
	}
	// Never nil: a nil Env would give the command hilrun's environment.
	cmd.Env = append(append(make([]string, 0, len(base)+len(env)), base...), env...)
	cmd.Stdout, cmd.Stderr = out, out
	// Watched, so that what the command starts dies with hilrun even when
	// hilrun is killed.
	procgroup.Prepare(cmd)
	// A grandchild holding the output pipe must not keep Wait waiting
	// once the process itself has exited.
	cmd.WaitDelay = grace
	if err := cmd.Start(); err != nil {
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
		procgroup.Terminate(cmd.Process)
		t := time.NewTimer(grace)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			procgroup.Kill(cmd.Process)
		}
	}()
	werr := cmd.Wait()
	procgroup.Kill(cmd.Process)
	close(done)
	<-stopped
	if ctx.Err() != nil {
		return -1, fmt.Errorf("run %s: %w", argv[0], ctx.Err())
	}
	var exitErr *exec.ExitError
	switch {
	case werr == nil, errors.Is(werr, exec.ErrWaitDelay):
		return procgroup.ExitCode(cmd.ProcessState), nil
	case errors.As(werr, &exitErr):
		return procgroup.ExitCode(exitErr.ProcessState), nil
	}
	return -1, fmt.Errorf("run %s: %w", argv[0], werr)
}

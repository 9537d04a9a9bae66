// How the parent runs each measured side: a process of its own (see
// ChildEnv) on a fresh virtual board, read back from the JSON it prints.

package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/sim"
)

// ChildEnviron returns the environment of a hilrun side: this process's,
// with ChildEnv set and, for binaries built with the race detector, the
// detector's one-second wait at exit turned off (it would add a second to
// every side).
func ChildEnviron() []string {
	race := "atexit_sleep_ms=0"
	if v := os.Getenv("GORACE"); v != "" {
		race = v + " " + race
	}
	return append(os.Environ(), ChildEnv+"=1", "GORACE="+race)
}

// Kinds of measured processes, for bencher.run.
const (
	kindHilrun = "hilrun"
	kindPython = "python"
	kindExpect = "expect"
	kindFloor  = "floor"
	// kindPyStdlib is a Python script of the standard library alone, run
	// with Options.BoardPython.
	kindPyStdlib = "python-stdlib"
	// kindBaseline is a hilbench child of Options.Baseline.
	kindBaseline = "baseline"
)

// withBoard runs fn with a freshly started virtual board, so that no block
// sees what another left in the pty.
func (bb *bencher) withBoard(fn func(b *sim.Board) error) error {
	return bb.withConsoles(1, fn)
}

// withConsoles is withBoard for a board with n consoles.
func (bb *bencher) withConsoles(n int, fn func(b *sim.Board) error) error {
	b := sim.New(sim.Options{RealtimeRx: !bb.opts.BoardNormal, Consoles: n})
	if err := b.Start(); err != nil {
		return fmt.Errorf("start the virtual board: %w", err)
	}
	err := fn(b)
	if cerr := b.Close(); err == nil && cerr != nil {
		err = cerr
	}
	return err
}

// side runs one measured process: a hilrun child (python false) or a
// pexpect script (args[0] is the script name). It returns the JSON it
// printed and its peak memory in KiB.
func (b *bencher) side(ctx context.Context, python bool, args []string, timeout time.Duration) (childOutput, int64, error) {
	kind := kindHilrun
	if python {
		kind = kindPython
	}
	return b.run(ctx, kind, args, timeout)
}

// run runs one measured process of kind: a hilrun child, a pexpect or Tcl
// expect script (args[0] names it) or the C client (args are its own).
func (b *bencher) run(ctx context.Context, kind string, args []string, timeout time.Duration) (childOutput, int64, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var cmd *exec.Cmd
	script := func() []string { return append([]string{filepath.Join(b.opts.WorkDir, args[0])}, args[1:]...) }
	switch kind {
	case kindPython:
		cmd = exec.CommandContext(ctx, b.opts.Python, script()...)
	case kindPyStdlib:
		cmd = exec.CommandContext(ctx, b.opts.BoardPython, script()...)
	case kindExpect:
		cmd = exec.CommandContext(ctx, b.opts.Expect, script()...)
	case kindFloor:
		cmd = exec.CommandContext(ctx, b.floor, args...)
	case kindBaseline:
		cmd = exec.CommandContext(ctx, b.opts.Baseline, args...)
		cmd.Env = ChildEnviron()
	default:
		cmd = b.opts.Child(ctx, args...)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	var rss int64
	if cmd.ProcessState != nil {
		rss = maxRSS(cmd.ProcessState)
	}
	what := strings.Join(args, " ")
	switch kind {
	case kindPython:
		what = b.opts.Python + " " + what
	case kindPyStdlib:
		what = b.opts.BoardPython + " " + what
	case kindExpect:
		what = b.opts.Expect + " " + what
	case kindFloor:
		what = "floor " + what
	case kindBaseline:
		what = b.opts.Baseline + " " + what
	}
	if err != nil {
		return childOutput{}, rss, fmt.Errorf("%s: %w: %s", what, err, lastLines(stderr.String(), 5))
	}
	var out childOutput
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		return childOutput{}, rss, fmt.Errorf("%s: read its result: %w (output %q)", what, err, clip(stdout.String(), 200))
	}
	if out.Python != "" && b.rep.Env.Python == "" {
		b.rep.Env.Python, b.rep.Env.Pexpect = out.Python, out.Pexpect
	}
	return out, rss, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " | ")
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }

func nanos(ns []int64) []time.Duration {
	out := make([]time.Duration, len(ns))
	for i, v := range ns {
		out[i] = time.Duration(v)
	}
	return out
}

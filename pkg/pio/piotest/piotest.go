// Package piotest replays recorded PlatformIO outputs for the tests of
// packages that run the pio verbs (the MCP server, the CLI) without a
// PlatformIO installed. The recordings are pkg/pio/testdata/*.txt, each
// citing its source in a .source file beside it.
package piotest

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/hilrun/hilrun/pkg/pio"
)

// ExitRejected is the exit code of a call no scenario was recorded with.
const ExitRejected = 97

// Replay is a pio.Runner that answers each call with the first of its
// scenarios whose "# args:" line equals the call's arguments ($DIR
// standing for Dir), and rejects any other call with ExitRejected. It
// records the calls.
type Replay struct {
	// Scenarios are names of pkg/pio/testdata files, without .txt.
	Scenarios []string
	// Dir is what $DIR stands for.
	Dir string

	mu    sync.Mutex
	calls [][]string
}

var _ pio.Runner = (*Replay)(nil)

// Calls are the argument vectors the replay was called with.
func (r *Replay) Calls() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.calls)
}

// Testdata is the folder of the recordings.
func Testdata() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "testdata")
}

// RunPIO implements pio.Runner.
func (r *Replay) RunPIO(ctx context.Context, dir string, args []string, out io.Writer) (int, error) {
	r.mu.Lock()
	r.calls = append(r.calls, slices.Clone(args))
	r.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return -1, fmt.Errorf("run pio: %w", err)
	}
	for _, name := range r.Scenarios {
		b, err := os.ReadFile(filepath.Join(Testdata(), name+".txt"))
		if err != nil {
			return -1, err
		}
		exit, rest := 0, strings.ReplaceAll(string(b), "$DIR", r.Dir)
		var want []string
		for strings.HasPrefix(rest, "# ") {
			line, after, _ := strings.Cut(rest, "\n")
			rest = after
			if v, ok := strings.CutPrefix(line, "# exit: "); ok {
				exit, _ = strconv.Atoi(v)
			}
			if v, ok := strings.CutPrefix(line, "# args: "); ok {
				if err := json.Unmarshal([]byte(v), &want); err != nil {
					return -1, fmt.Errorf("%s: %w", name, err)
				}
			}
		}
		if want != nil && !slices.Equal(want, args) {
			continue
		}
		io.WriteString(out, rest)
		return exit, nil
	}
	fmt.Fprintf(out, "fake pio: unexpected arguments %q: no scenario of %s was recorded with them\n", args, strings.Join(r.Scenarios, ","))
	return ExitRejected, nil
}

// Note says in the test output, under CI=true, that the test runs on
// recorded outputs because no real pio is on PATH: PlatformIO is the one
// tool hilrun's CI replays rather than runs.
func Note(t testing.TB) {
	t.Helper()
	if os.Getenv("CI") != "true" {
		return
	}
	if p, err := exec.LookPath("pio"); err == nil {
		t.Logf("a real pio is on PATH (%s), but this test replays recorded outputs (pkg/pio/testdata); pkg/pio's TestRealPIO runs it", p)
		return
	}
	t.Log("REPLAY FALLBACK: no real pio on PATH under CI=true; PlatformIO cannot be installed here, so this test runs on recorded outputs (pkg/pio/testdata, sources in *.source)")
}

// The two ways a child side drives hilrun: a generated sequence run with
// the engine hilrun run uses (runSequence), or a serialx console opened
// directly (openSynced).

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// quoteYAML renders s as a YAML double-quoted scalar. JSON strings are
// valid YAML, escapes included.
func quoteYAML(s string) string {
	b, _ := json.Marshal(s) // a string always marshals
	return string(b)
}

// syncSteps is the first step of every generated sequence.
var syncSteps = "  - send: echo sync\n    expect: " + quoteYAML(syncReply) + "\n"

// runSequence parses a generated sequence, binds its console to port and
// runs it with the engine hilrun run uses. A sequence that does not pass
// is an error.
func runSequence(ctx context.Context, src, port, logDir string) (*runner.SequenceResult, error) {
	return runBound(ctx, src, map[string]string{steps.DefaultDevice: port}, nil, logDir)
}

// runBound parses a generated sequence, binds its consoles to ports and its
// probes to running OpenOCDs (name to telnet address, as hilrun run
// --openocd NAME=HOST:PORT does) and runs it with the engine hilrun run
// uses (internal/engine's options). A sequence that does not pass is an error.
func runBound(ctx context.Context, src string, ports, openocds map[string]string, logDir string) (*runner.SequenceResult, error) {
	return runWatched(ctx, src, ports, openocds, logDir, nil)
}

// runWatched is runBound with watch receiving every event too (nil for
// none), after the event stream.
func runWatched(ctx context.Context, src string, ports, openocds map[string]string, logDir string, watch runner.Sink) (*runner.SequenceResult, error) {
	seq, err := steps.Parse("hilbench.yaml", []byte(src), steps.LoadOptions{})
	if err != nil {
		return nil, fmt.Errorf("parse the generated sequence: %w", err)
	}
	pl, err := plan.Bind(seq, plan.Sources{Ports: ports, OpenOCDs: openocds})
	if err != nil {
		return nil, err
	}
	// As hilrun run runs it: every finished step goes to the event stream
	// on disk.
	dir, err := os.MkdirTemp("", "hilbench-events-")
	if err != nil {
		return nil, fmt.Errorf("make a folder for the event stream: %w", err)
	}
	defer os.RemoveAll(dir)
	events, err := results.Create(filepath.Join(dir, results.EventFile))
	if err != nil {
		return nil, err
	}
	defer events.Close()
	res := pl.Run(ctx, engine.NewBench(engine.BenchConfig{LogDir: logDir, Gates: Gates}), plan.Output{Sink: runner.Tee(events, watch), KeepSteps: true})
	if res.Status != runner.Passed {
		msg := res.Error
		for _, s := range res.Steps {
			if s.Status == runner.Failed || s.Status == runner.Errored {
				msg = fmt.Sprintf("step %s (%s): %s", s.Path, s.Name, s.Message)
				break
			}
		}
		return res, fmt.Errorf("sequence %s: %s", res.Status, msg)
	}
	return res, nil
}

// stepsOf returns the results of the steps of kind, in the order they ran.
func stepsOf(res *runner.SequenceResult, kind steps.Kind) []runner.StepResult {
	var out []runner.StepResult
	for _, s := range res.Steps {
		if s.Kind == string(kind) {
			out = append(out, s)
		}
	}
	return out
}

// openSynced opens port as a serialx console (logging under logDir when
// not "") and waits until the board answers, so that measurements start
// on a quiet line.
func openSynced(ctx context.Context, port, logDir string) (*serialx.Console, error) {
	c, err := serialx.Open(ctx, "console", serialx.Config{Path: port, LogDir: logDir, Devices: Gates.Devices, Dial: Gates.Dial})
	if err != nil {
		return nil, err
	}
	if err := consoleSync(ctx, c); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func consoleSync(ctx context.Context, c *serialx.Console) error {
	cur, err := c.Write(ctx, []byte("echo sync\n"))
	if err != nil {
		return err
	}
	sctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err = c.Expect(sctx, cur, []stream.Pattern{stream.Literal(syncReply)}, nil)
	return err
}

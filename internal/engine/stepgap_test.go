package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/gate"
	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/report"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// fileCheck is a sink after the event stream: at each step's start it
// reads the event file back and checks that every step that had finished
// when the step before it started is there, as bytes in the file (the
// guarantee: a step's record is in the file before the step after next
// starts).
type fileCheck struct {
	t    *testing.T
	path string
	// finished are the indexes of the steps finished so far; due those
	// finished when the previous step started.
	finished, due []int
	starts        int
	failed        bool
}

func (f *fileCheck) Event(e runner.Event) {
	switch e.Type {
	case runner.StepStarted:
		f.starts++
		if len(f.due) > 0 && !f.failed {
			in := map[int]bool{}
			if err := results.Read(f.path, func(r *results.Record) error {
				if r.Type == results.RecordStep {
					in[r.Step.Index] = true
				}
				return nil
			}); err != nil {
				f.t.Errorf("read the event file: %v", err)
			}
			for _, i := range f.due {
				if !in[i] {
					f.t.Errorf("step %s started, and step %d, finished before the step before it started, is not in the event file", e.Step.Path, i)
					f.failed = true
					break
				}
			}
		}
		f.due = append(f.due[:0], f.finished...)
	case runner.StepFinished:
		f.finished = append(f.finished, e.Step.Index)
	}
}

// guaranteeSeq has steps that wait on the board (which Idle), steps that
// never wait (set, log, assert: no Idle between them), and a parallel:
// step whose branches wait on two consoles at once.
const guaranteeSeq = `name: guarantee
devices:
  a: {}
  b: {}
expect_timeout: 10s
steps:
  - send: ''
    to: a
    expect: 'sim> '
  - send: ''
    to: b
    expect: 'sim> '
%s
  - parallel:
      left:
%s
      right:
%s
%s
`

func guaranteePlan(t *testing.T, board *sim.Board) *plan.Plan {
	var waits, quick, left, right strings.Builder
	for i := range 20 {
		fmt.Fprintf(&waits, "  - send: echo w%d\n    to: a\n    expect: w%d\n", i, i)
		fmt.Fprintf(&quick, "  - set: {q%d: %d}\n  - assert: q%d == %d\n", i, i, i, i)
		fmt.Fprintf(&left, "        - send: echo l%d\n          to: a\n          expect: l%d\n        - set: {l%d: 1}\n", i, i, i)
		fmt.Fprintf(&right, "        - send: echo r%d\n          to: b\n          expect: r%d\n        - set: {r%d: 1}\n", i, i, i)
	}
	src := fmt.Sprintf(guaranteeSeq, waits.String()+quick.String(), left.String(), right.String(), quick.String()+waits.String())
	seq, err := steps.Parse("guarantee.yaml", []byte(src), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Bind(seq, plan.Sources{Ports: map[string]string{"a": board.ConsolePath(0), "b": board.ConsolePath(1)}})
	if err != nil {
		t.Fatal(err)
	}
	return pl
}

// TestEventFileBeforeTheStepAfterNext runs steps on the virtual board as
// hilrun run does (the event file and a held progress console) and checks
// the guarantee at every step's start, with the sinks' Idle and without
// it (then only the event stream's own fallback writes), branches
// included. Run it with -race: Idle comes from both branches at once.
func TestEventFileBeforeTheStepAfterNext(t *testing.T) {
	board := sim.New(sim.Options{Consoles: 2})
	if err := board.Start(); err != nil {
		t.Fatal(err)
	}
	defer board.Close()
	pl := guaranteePlan(t, board)
	for _, idle := range []bool{true, false} {
		t.Run(fmt.Sprintf("idle=%v", idle), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), results.EventFile)
			events, err := results.Create(path)
			if err != nil {
				t.Fatal(err)
			}
			var out testenv.Buffer
			console := report.NewConsole(&out, report.ConsoleOptions{Hold: report.DefaultHold})
			check := &fileCheck{t: t, path: path}
			var ev, con runner.Sink = events, console
			if !idle {
				ev, con = plain{events}, plain{console}
			}
			bench := engine.NewBench(engine.BenchConfig{Gates: gate.Permissive(environ.Host())})
			res := pl.Run(context.Background(), bench, plan.Output{Sink: runner.Tee(ev, con, check)})
			if err := events.Close(); err != nil {
				t.Fatal(err)
			}
			if res.Status != runner.Passed {
				t.Fatalf("the sequence did not pass: %s\n%s", res.Error, out.String())
			}
			if check.starts < 200 {
				t.Fatalf("only %d steps started", check.starts)
			}
			// Every step's line is printed by the end of the sequence.
			text := out.String()
			if n := strings.Count(text, "✓"); n != len(check.finished) {
				t.Errorf("%d step lines printed, %d steps finished:\n%s", n, len(check.finished), text)
			}
			if !strings.Contains(text, "PASSED guarantee") {
				t.Errorf("no end line:\n%s", text)
			}
		})
	}
}

// plain hides a sink's Idle.
type plain struct{ s runner.Sink }

func (p plain) Event(e runner.Event) { p.s.Event(e) }

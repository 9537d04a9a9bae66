package engine_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/gate"
	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/report"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// gapSteps is how many send/expect steps one run of BenchmarkStepGap has.
const gapSteps = 300

// BenchmarkStepGap runs a sequence of send/expect steps against the
// virtual board on a real pty, its results going where hilrun run sends
// them: the event file, and the progress console to a pipe (CI) or to a
// terminal (a pty, in colour). By the runner's own clock it reports, in
// µs at the median, p95 and p99:
//
//   - gap: from the end of one step (Started+Duration) to the start of
//     the next (Started);
//   - pre: inside a step, from its start to its console Write;
//   - post: inside a step, from Expect returning to the step's end;
//
// and wall-µs/step, the time from the start of the first echo step to
// the end of the last over their number. pre and post are what
// the runner does inside a step while not waiting on the device, so that
// moving work from between the steps into them shows. For a profile:
//
//	go test -run '^$' -bench StepGap/pipe -cpuprofile cpu.out ./internal/engine
func BenchmarkStepGap(b *testing.B) {
	for _, out := range []string{"pipe", "pty"} {
		b.Run(out, func(b *testing.B) { benchStepGap(b, out) })
	}
}

func benchStepGap(b *testing.B, out string) {
	board := sim.New(sim.Options{})
	if err := board.Start(); err != nil {
		b.Fatal(err)
	}
	defer board.Close()
	w, stop := progressOutput(b, out)
	defer stop()
	pl := gapPlan(b, board.SerialPath())
	gates := gate.Permissive(environ.Host())
	var gap, pre, post []time.Duration
	var wall time.Duration
	n := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		tap := &gapTap{}
		bench := engine.NewBench(engine.BenchConfig{Gates: gates}).WithOpen(tap.wrap)
		events, err := results.Create(filepath.Join(b.TempDir(), results.EventFile))
		if err != nil {
			b.Fatal(err)
		}
		console := report.NewConsole(w, report.ConsoleOptions{Color: out == "pty", Hold: report.DefaultHold})
		res := pl.Run(context.Background(), bench, plan.Output{Sink: runner.Tee(events, console, tap)})
		if err := events.Close(); err != nil {
			b.Fatal(err)
		}
		if res.Status != runner.Passed {
			b.Fatalf("the sequence did not pass: %s", res.Error)
		}
		g, p, q := tap.figures(b)
		gap, pre, post = append(gap, g...), append(pre, p...), append(post, q...)
		first, last := tap.steps[1], tap.steps[gapSteps]
		wall += last.Started + last.Duration - first.Started
		n += gapSteps
	}
	b.StopTimer()
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"gap", gap}, {"pre", pre}, {"post", post}} {
		slices.Sort(m.d)
		for _, q := range []struct {
			at   float64
			name string
		}{{0.5, "p50"}, {0.95, "p95"}, {0.99, "p99"}} {
			b.ReportMetric(us(m.d[int(q.at*float64(len(m.d)-1))]), m.name+"-"+q.name+"-µs")
		}
		b.ReportMetric(us(mean(m.d)), m.name+"-mean-µs")
	}
	b.ReportMetric(us(wall)/float64(n), "wall-µs/step")
	b.ReportMetric(0, "ns/op")
}

func us(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

func mean(d []time.Duration) time.Duration {
	var sum time.Duration
	for _, x := range d {
		sum += x
	}
	return sum / time.Duration(len(d))
}

// progressOutput is where the progress console writes: a pipe or a pty,
// read to its end by a goroutine as a CI log or a terminal would.
func progressOutput(b *testing.B, out string) (io.Writer, func()) {
	var r, w *os.File
	var err error
	if out == "pty" {
		r, w, err = pty.Open()
	} else {
		r, w, err = os.Pipe()
	}
	if err != nil {
		b.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, r)
		close(done)
	}()
	return w, func() {
		w.Close()
		if out == "pty" {
			r.Close() // a pty's master reads EIO, or blocks, once the slave is gone
		}
		<-done
		r.Close()
	}
}

// gapPlan is a sequence of gapSteps send/expect steps on the console at
// port, after one that waits for the prompt.
func gapPlan(b *testing.B, port string) *plan.Plan {
	var src strings.Builder
	src.WriteString("name: gap\nexpect_timeout: 5s\nsteps:\n  - send: ''\n    expect: 'sim> '\n")
	for i := range gapSteps {
		fmt.Fprintf(&src, "  - send: echo x%d\n    expect: x%d\n", i, i)
	}
	seq, err := steps.Parse("gap.yaml", []byte(src.String()), steps.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	pl, err := plan.Bind(seq, plan.Sources{Ports: map[string]string{steps.DefaultDevice: port}})
	if err != nil {
		b.Fatal(err)
	}
	return pl
}

// gapTap is the benchmark's sink and console wrapper: it keeps the
// finished steps and when each step's Write began and its Expect
// returned, by the run's clock. The runner calls it from one goroutine
// (the sequence has no parallel: step), and a run's steps alternate
// Write and Expect.
type gapTap struct {
	start  time.Time
	steps  []*runner.StepResult
	writes []time.Duration
	expect []time.Duration
}

func (t *gapTap) Event(e runner.Event) {
	switch e.Type {
	case runner.SequenceStarted:
		t.start = e.Time.Add(-e.Offset)
	case runner.StepFinished:
		t.steps = append(t.steps, e.Step)
	}
}

func (t *gapTap) wrap(next runner.Opener) runner.Opener {
	return func(ctx context.Context, dev *steps.Device) (runner.Console, error) {
		c, err := next(ctx, dev)
		if err != nil {
			return nil, err
		}
		return &gapConsole{Console: c, tap: t}, nil
	}
}

// figures are the gaps between the steps and the pre and post times of
// each step.
func (t *gapTap) figures(b *testing.B) (gap, pre, post []time.Duration) {
	if len(t.steps) != gapSteps+1 || len(t.writes) != len(t.steps) || len(t.expect) != len(t.steps) {
		b.Fatalf("%d steps, %d writes, %d expects", len(t.steps), len(t.writes), len(t.expect))
	}
	for i, s := range t.steps {
		if i > 0 {
			p := t.steps[i-1]
			gap = append(gap, s.Started-(p.Started+p.Duration))
		}
		pre = append(pre, t.writes[i]-s.Started)
		post = append(post, s.Started+s.Duration-t.expect[i])
	}
	return gap, pre, post
}

// gapConsole notes when the runner writes and when its expects return.
type gapConsole struct {
	runner.Console
	tap *gapTap
}

func (c *gapConsole) Write(ctx context.Context, p []byte) (int64, error) {
	c.tap.writes = append(c.tap.writes, time.Since(c.tap.start))
	return c.Console.Write(ctx, p)
}

func (c *gapConsole) Expect(ctx context.Context, from int64, want, failOn []stream.Pattern) (stream.Match, error) {
	m, err := c.Console.Expect(ctx, from, want, failOn)
	c.tap.expect = append(c.tap.expect, time.Since(c.tap.start))
	return m, err
}

// Unwrap is the console wrapped, for what the runner asks of it.
func (c *gapConsole) Unwrap() runner.Console { return c.Console }

// OpenedAt is where the wrapped console's output began.
func (c *gapConsole) OpenedAt() int64 {
	if o, ok := c.Console.(runner.OpenedConsole); ok {
		return o.OpenedAt()
	}
	return c.Console.Cursor()
}

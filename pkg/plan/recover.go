package plan

import (
	"context"
	"errors"
	"fmt"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// Ladder is a bench's recovery ladder bound into plans: its health check
// and each rung, each a plan made by the caller's own binding (the one
// every sequence of the run goes through, with its checks and, over MCP,
// its policy). Like a plan, it never changes once made.
type Ladder struct {
	bench  string
	health *Plan
	rungs  []*Plan
	src    []*steps.Rung
}

// BindLadder binds l, the ladder of the bench called bench, with bind:
// the health check, then each rung. It returns nil for a nil ladder or one
// without a health check (which has no rungs either).
func BindLadder(bench string, l *steps.Ladder, bind func(*steps.Sequence) (*Plan, error)) (*Ladder, error) {
	if l == nil || l.Health == nil {
		return nil, nil
	}
	out := &Ladder{bench: bench, src: l.Rungs}
	var err error
	if out.health, err = bind(l.Health); err != nil {
		return nil, fmt.Errorf("bench %s: the health check (%s): %w", bench, l.Health.Pos, err)
	}
	for _, r := range l.Rungs {
		pl, err := bind(r.Seq)
		if err != nil {
			return nil, fmt.Errorf("bench %s: recover %s (%s): %w", bench, r, r.Pos, err)
		}
		out.rungs = append(out.rungs, pl)
	}
	return out, nil
}

// Bench names the ladder's bench.
func (l *Ladder) Bench() string { return l.bench }

// Plans are the health check's plan, then each rung's.
func (l *Ladder) Plans() []*Plan { return append([]*Plan{l.health}, l.rungs...) }

// Rebind returns a ladder whose plans are those of l rebound by f (see
// Plan.Rebind); l stays as it was.
func (l *Ladder) Rebind(f func(seq *steps.Sequence) (*steps.Sequence, error)) (*Ladder, error) {
	out := &Ladder{bench: l.bench, src: l.src}
	var err error
	if out.health, err = l.health.Rebind(f); err != nil {
		return nil, err
	}
	for _, r := range l.rungs {
		pl, err := r.Rebind(f)
		if err != nil {
			return nil, err
		}
		out.rungs = append(out.rungs, pl)
	}
	return out, nil
}

// Check checks every plan of the ladder as Plan.Check does.
func (l *Ladder) Check(bench runner.Bench) error {
	var errs []error
	for _, pl := range l.Plans() {
		errs = append(errs, pl.Check(bench))
	}
	return errors.Join(errs...)
}

// RunFunc runs one plan of a ladder on the bench, its steps kept in the
// result (Output.KeepSteps); what says which ("health", "rung 2"), for
// its log folder.
type RunFunc func(ctx context.Context, pl *Plan, what string) *runner.SequenceResult

// Before runs the health check before the sequence in file. It returns
// nil when the check passes, else the climb that followed it.
func (l *Ladder) Before(ctx context.Context, run RunFunc, file string) *results.Recovery {
	r := l.climb(ctx, run, results.TriggerHealth, file)
	if r.Recovered && len(r.Rungs) == 0 {
		return nil
	}
	return r
}

// After climbs the ladder after the sequence in file ended in a bench
// error: the health check first, then, while it fails, each rung followed
// by the check again. The sequence stays as it ended; the climb says only
// whether the bench takes more work.
func (l *Ladder) After(ctx context.Context, run RunFunc, file string) *results.Recovery {
	return l.climb(ctx, run, results.TriggerError, file)
}

// climb runs the health check, and while it fails each rung and the check
// again, until the check passes, the rungs run out or ctx ends.
func (l *Ladder) climb(ctx context.Context, run RunFunc, trigger, file string) *results.Recovery {
	rec := &results.Recovery{Bench: l.bench, Trigger: trigger, Sequence: file}
	first := run(ctx, l.health, "health")
	rec.StartedAt = first.StartedAt
	end := first.StartedAt.Add(first.Duration)
	check := results.CheckFrom(first)
	rec.Check = &check
	rec.Recovered = first.Status == runner.Passed
	for i, pl := range l.rungs {
		if rec.Recovered {
			break
		}
		if ctx.Err() != nil {
			rec.Interrupted = true
			break
		}
		src := l.src[i]
		res := run(ctx, pl, fmt.Sprintf("rung-%d", src.Index))
		h := run(ctx, l.health, fmt.Sprintf("health-after-rung-%d", src.Index))
		end = h.StartedAt.Add(h.Duration)
		rr := results.RungResult{Index: src.Index, Label: src.Label(), File: src.Pos.File, Line: src.Pos.Line, Column: src.Pos.Col,
			Check: results.CheckFrom(res), Health: results.CheckFrom(h)}
		rec.Rungs = append(rec.Rungs, rr)
		rec.Recovered = h.Status == runner.Passed
	}
	if !rec.Recovered && ctx.Err() != nil {
		rec.Interrupted = true
	}
	rec.DurationMS = results.MS(end.Sub(rec.StartedAt))
	return rec
}

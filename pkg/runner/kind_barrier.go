package runner

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
)

func init() { leafRunners[steps.KindBarrier] = (*run).barrierStep }

// barrierStep waits at its barrier until every branch that names it has
// arrived, then leaves at the time the barrier set, together with them
// (see barrierLead): the step after it starts as a step after a delay
// does. A wait that a branch's failure cancelled is reported skipped.
func (r *run) barrierStep(ctx context.Context, s *steps.Step, res *StepResult) error {
	name := steps.BarrierName(s)
	if r.branch == nil || r.branch.block == nil {
		return fmt.Errorf("barrier %s: not in a branch of a parallel: step", name)
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = r.seq.ExpectTimeout
	}
	arrived := time.Now()
	blk := r.branch.block
	g, k, err := blk.arrive(name, r.branch.name)
	at := time.Time{}
	if err == nil {
		at, err = blk.wait(ctx, name, r.branch.name, g, k, timeout)
	}
	var ce *errCancelled
	switch {
	case ctx.Err() != nil:
		// An interrupt (or the sequence's end) is what ends this wait,
		// whatever else happened to the crossing meanwhile: a release or
		// another branch stopped by the same interrupt.
		return context.Cause(ctx)
	case errors.As(err, &ce):
		res.Status, res.Message = Skipped, "cancelled: "+ce.reason
		return nil
	case err != nil:
		return &stepError{msg: err.Error()}
	}
	woke := time.Now()
	err = r.sleepTimed(ctx, at)
	left := time.Now()
	res.Data = map[string]any{
		"barrier":     name,
		"crossing":    k + 1,
		"waited_us":   at.Sub(arrived).Microseconds(),
		"woke_us":     woke.Sub(at).Microseconds(),
		"late_us":     left.Sub(at).Microseconds(),
		"released_ms": ms(at.Sub(r.start)),
	}
	res.Message = fmt.Sprintf("crossing %d, waited %s", k+1, at.Sub(arrived).Round(time.Microsecond))
	return err
}

// absent breaks the crossings of skipped step s that this branch does
// not make (a barrier step, or a repeat around barriers, in a group
// deselected by -m), every crossing the step would have made, so the
// other branches do not wait for them. A group's steps are skipped one by
// one, so each comes here itself.
func (r *run) absent(s *steps.Step, why string) {
	if r.branch == nil || r.branch.block == nil {
		return
	}
	blk, name := r.branch.block, r.branch.name
	absentCrossings(s, 1, func(bar string, n uint64) { blk.absent(bar, name, n, why) })
}

// absentCrossings calls fn for each barrier step in s, with how many
// times s, run n times, would cross it (a repeat's iterations multiplied
// out).
func absentCrossings(s *steps.Step, n uint64, fn func(string, uint64)) {
	if bar := steps.BarrierName(s); bar != "" {
		fn(bar, n)
		return
	}
	if s.Kind == steps.KindRepeat {
		it, _ := steps.Iterations(s)
		hi, lo := bits.Mul64(n, it)
		if n = lo; hi != 0 {
			n = math.MaxUint64
		}
	}
	for _, c := range s.Steps {
		absentCrossings(c, n, fn)
	}
}

package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
)

// pollTrace is the values a mem_poll read, for a plot of them over time:
// each change of value (at most maxPollSamples), and the latest read of a
// value that stayed the same.
type pollTrace struct {
	samples [][2]any // [ms since the sequence started, value]
	last    uint64
	// hold says the last sample is the latest read of an unchanged
	// value, moved on by each read.
	hold bool
}

func (p *pollTrace) add(at float64, v uint64) {
	n := len(p.samples)
	switch {
	case n > 0 && v == p.last && p.hold:
		p.samples[n-1][0] = at
	case n >= maxPollSamples:
		// Full: the last sample stands for the latest read.
		p.samples[n-1] = [2]any{at, v}
	default:
		p.hold = n > 0 && v == p.last
		p.samples = append(p.samples, [2]any{at, v})
	}
	p.last = v
}

func (r *run) memPoll(ctx context.Context, s *steps.Step, res *StepResult) error {
	d, t, err := r.memStep(ctx, s)
	if err != nil {
		return err
	}
	interval := s.Mem.Interval
	if interval == 0 {
		interval = DefaultPollInterval
	}
	pctx, cancel := r.probeCtx(ctx, s)
	defer cancel()
	began := time.Now()
	var last uint64
	polls := 0
	var trace pollTrace
	defer func() {
		if res.Data != nil && len(trace.samples) > 0 {
			res.Data["samples"] = trace.samples
		}
	}()
	want, err := r.memWant(s.Mem.Check)
	if err != nil {
		return err
	}
	for {
		next := time.Now().Add(interval)
		vals, err := d.ReadMemory(pctx, t.addr, t.width, 1)
		if err != nil {
			if errors.Is(context.Cause(pctx), errStepTimeout) && ctx.Err() == nil && polls > 0 {
				break
			}
			return probeErr(ctx, pctx, fmt.Sprintf("poll %s at 0x%08x", t.what, t.addr), err)
		}
		polls++
		last = vals[0]
		trace.add(ms(res.Started+time.Since(began)), last)
		done, err := r.pollDone(ctx, s.Mem, want, last)
		if err != nil {
			return err
		}
		if done {
			res.Data = memData(t, vals, s.Mem.Label)
			res.Data["polls"] = polls
			res.Data["waited_ms"] = ms(time.Since(began))
			noteAccess(res, d)
			res.Message = fmt.Sprintf("%s = 0x%0*x after %d reads", t.what, t.width/4, last, polls)
			if s.Mem.SaveVar != "" {
				return r.saveValues(res, s.Mem.SaveVar, vals)
			}
			return nil
		}
		if err := sleepUntil(pctx, next); err != nil {
			if errors.Is(context.Cause(pctx), errStepTimeout) && ctx.Err() == nil {
				break
			}
			return fmt.Errorf("poll %s: %w", t.what, err)
		}
	}
	cond := ""
	if s.Mem.Until != nil {
		cond = s.Mem.Until.Src
	} else {
		_, cond = checkValues(want, []uint64{last})
	}
	res.Data = map[string]any{"address": t.addr, "width": t.width, "values": []uint64{last}, "label": t.what, "polls": polls}
	noteAccess(res, d)
	return &stepError{
		msg:      fmt.Sprintf("%s at 0x%08x never met %s in %s (%d reads, last 0x%0*x)", t.what, t.addr, cond, time.Since(began).Round(time.Millisecond), polls, t.width/4, last),
		expected: cond, received: fmt.Sprintf("0x%0*x", t.width/4, last),
	}
}

func (r *run) pollDone(ctx context.Context, m *steps.MemSpec, want *memWanted, v uint64) (bool, error) {
	if want != nil {
		ok, _ := checkValues(want, []uint64{v})
		return ok, nil
	}
	out, err := r.eval(ctx, "until "+m.Until.Src, m.Until, v)
	if err != nil {
		return false, err
	}
	b, ok := out.(bool)
	if !ok {
		return false, &stepError{msg: fmt.Sprintf("until %s gave %v, not true or false", m.Until.Src, out)}
	}
	return b, nil
}

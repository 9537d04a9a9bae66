package runner

import (
	"context"
	"errors"
	"fmt"

	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

func init() { leafRunners[steps.KindCapture] = (*run).capture }

// capture records the step's console from its cursor until the window
// ends (its duration, silence, a pattern, a size), and saves the text.
func (r *run) capture(ctx context.Context, s *steps.Step, res *StepResult) error {
	c, err := r.console(s.To)
	if err != nil {
		return err
	}
	until, err := r.patterns(s.Capture.Until)
	if err != nil {
		return err
	}
	failOn, err := r.patterns(s.FailOn)
	if err != nil {
		return err
	}
	cs := s.Capture
	opt := stream.CaptureOptions{
		Duration: cs.Duration, IdleTimeout: cs.IdleTimeout, InitialTimeout: cs.InitialTimeout,
		StartOnFirstByte: cs.FirstByte, Until: until, MaxBytes: cs.MaxBytes, FailOn: failOn,
	}
	// A capture that only waits for a pattern is bounded like an expect.
	timeout := s.Timeout
	untilOnly := cs.Duration == 0 && cs.IdleTimeout == 0 && cs.MaxBytes == 0
	if timeout == 0 && untilOnly {
		timeout = r.seq.ExpectTimeout
	}
	cctx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeoutCause(ctx, timeout, errStepTimeout)
		defer cancel()
	}
	from := r.cursor[s.To]
	cp, err := c.Capture(r.settle(cctx, s), from, opt)
	if err != nil {
		var fe *stream.FailOnError
		if berr, ok := bufferFailure(err, s.To, c); ok {
			return berr
		}
		switch {
		case errors.As(err, &fe):
			return &stepError{msg: fe.Error(), received: excerpt(c, fe.Offset)}
		case errors.Is(context.Cause(cctx), errStepTimeout) && ctx.Err() == nil:
			if derr := awayErr(c); derr != nil && untilOnly {
				return fmt.Errorf("capture on %s: timed out after %s: %w", s.To, timeout, derr)
			}
			if untilOnly {
				return &stepError{
					msg:      fmt.Sprintf("capture timed out after %s waiting for %s", timeout, describe(until)),
					expected: describe(until), received: stream.Printable(c.Tail(10, 2048)),
				}
			}
			cp.Reason = "timeout"
		case ctx.Err() != nil:
			return fmt.Errorf("capture: %w", context.Cause(ctx))
		default:
			return fmt.Errorf("capture on %s: %w", s.To, err)
		}
	}
	if cp.End > 0 {
		r.cursor[s.To] = cp.End
	}
	res.Data = map[string]any{
		"text":   string(cp.Data),
		"bytes":  len(cp.Data),
		"reason": cp.Reason,
		"offset": cp.Start,
	}
	if cs.Label != "" {
		res.Data["label"] = cs.Label
	}
	res.Message = fmt.Sprintf("captured %d bytes (%s)", len(cp.Data), cp.Reason)
	for _, sv := range s.Save {
		if err := r.setVar("save", sv.Var, string(cp.Data)); err != nil {
			return err
		}
		res.Saved = map[string]any{sv.Var: string(cp.Data)}
	}
	return nil
}

package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
)

// lines, break and reset_sequence are three kinds with one runner: each
// drives the modem control lines of the step's console.
func init() {
	for _, k := range []steps.Kind{steps.KindLines, steps.KindBreak, steps.KindResetSequence} {
		leafRunners[k] = (*run).lines
	}
}

// lineController is a console with modem control lines, such as
// *serialx.Console on a real serial port. A console that wraps another
// offers it with Unwrap() Console.
type lineController interface {
	SetLines(ctx context.Context, dtr, rts *bool) error
	PulseLines(ctx context.Context, dtr, rts *bool, hold time.Duration) error
	Break(ctx context.Context, d time.Duration) error
	ResetSequence(ctx context.Context, name string) error
}

// lines runs lines, break and reset_sequence steps.
func (r *run) lines(ctx context.Context, s *steps.Step, res *StepResult) error {
	c, err := r.console(s.To)
	if err != nil {
		return err
	}
	lc, ok := c.(lineController)
	for !ok {
		u, can := c.(interface{ Unwrap() Console })
		if !can {
			return fmt.Errorf("%s: the console of %s has no modem control lines", s.Kind, s.To)
		}
		c = u.Unwrap()
		lc, ok = c.(lineController)
	}
	switch s.Kind {
	case steps.KindLines:
		l := s.Lines
		if l.Hold > 0 {
			err = lc.PulseLines(ctx, l.DTR, l.RTS, l.Hold)
		} else {
			err = lc.SetLines(ctx, l.DTR, l.RTS)
		}
	case steps.KindBreak:
		err = lc.Break(ctx, s.Delay)
	case steps.KindResetSequence:
		err = lc.ResetSequence(ctx, s.ResetSequence)
	}
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("%s on %s: %w", s.Kind, s.To, context.Cause(ctx))
		}
		return fmt.Errorf("%s on %s: %w", s.Kind, s.To, err)
	}
	res.Message = string(s.Kind) + " " + s.Title()
	return nil
}

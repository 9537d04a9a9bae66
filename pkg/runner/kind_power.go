package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
)

func init() { leafRunners[steps.KindPower] = (*run).power }

// defaultPowerTimeout bounds each command of a power step when neither the
// step nor the board's power entry gives a timeout.
const defaultPowerTimeout = 30 * time.Second

// power runs a power step's commands. A power switch that fails is the
// bench's problem, not the board's: the step errors.
func (r *run) power(ctx context.Context, s *steps.Step, res *StepResult) error {
	p := *s.Power
	p.Target = steps.PowerTarget(r.seq, s.Power)
	e := r.seq.Power[p.Target]
	if e == nil {
		return fmt.Errorf("power: no power entry for %q in the bench file", p.Target)
	}
	timeout := e.Timeout
	if timeout == 0 {
		timeout = defaultPowerTimeout
	}
	if s.Timeout > 0 {
		timeout = s.Timeout
	}
	runOne := func(action string) error {
		argv := e.PowerCommand(action)
		pctx, cancel := context.WithTimeoutCause(ctx, timeout, errStepTimeout)
		defer cancel()
		code, out, logPath, err := r.host(pctx, "power", "power-"+p.Target, argv, e.Dir, nil)
		if res.Data == nil {
			res.Data = map[string]any{"target": p.Target, "action": p.Action}
		}
		res.Data["log"] = logPath
		switch {
		case err != nil && errors.Is(context.Cause(pctx), errStepTimeout) && ctx.Err() == nil:
			return fmt.Errorf("power %s %s: %s timed out after %s", action, p.Target, argv[0], timeout)
		case err != nil && ctx.Err() != nil:
			return fmt.Errorf("power %s %s: %w", action, p.Target, context.Cause(ctx))
		case err != nil:
			return fmt.Errorf("power %s %s: %w", action, p.Target, err)
		case code != 0:
			msg := fmt.Sprintf("power %s %s: %s exited with %d", action, p.Target, argv[0], code)
			_, kept, _ := out.parts()
			if l := lastLine(kept); l != "" {
				msg += "; last output: " + quoted([]byte(l))
			}
			return errors.New(msg)
		}
		return nil
	}
	if p.Action != "cycle" || e.Cycle != nil {
		if err := runOne(p.Action); err != nil {
			return err
		}
	} else {
		if err := runOne("off"); err != nil {
			return err
		}
		if err := sleepUntil(ctx, time.Now().Add(e.OffTimeOrDefault())); err != nil {
			return fmt.Errorf("power cycle %s: %w", p.Target, context.Cause(ctx))
		}
		if err := runOne("on"); err != nil {
			return err
		}
	}
	res.Message = "power " + p.Action + " " + p.Target
	return nil
}

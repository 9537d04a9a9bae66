package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// leafRunners runs each kind of step that has no children: one entry per
// leaf kind of steps.Kinds(), which a test checks.
var leafRunners = map[steps.Kind]func(r *run, ctx context.Context, s *steps.Step, res *StepResult) error{
	steps.KindSend: (*run).send,
	steps.KindExpect: func(r *run, ctx context.Context, s *steps.Step, res *StepResult) error {
		c, err := r.console(s.To)
		if err != nil {
			return err
		}
		return r.expect(ctx, s, res, c, r.cursor[s.To], false)
	},
	steps.KindMemRead:  (*run).memRead,
	steps.KindMemWrite: (*run).memWrite,
	steps.KindMemPoll:  (*run).memPoll,
}

// leaf runs a step that has no children.
func (r *run) leaf(ctx context.Context, s *steps.Step, res *StepResult) error {
	if fn := leafRunners[s.Kind]; fn != nil {
		return fn(r, ctx, s, res)
	}
	return fmt.Errorf("step kind %q cannot run", s.Kind)
}

func (r *run) console(name string) (Console, error) {
	c := r.consol[name]
	if c == nil {
		return nil, fmt.Errorf("device %s is not open", name)
	}
	return c, nil
}

func (r *run) send(ctx context.Context, s *steps.Step, res *StepResult) error {
	defer r.endTimed()
	c, err := r.console(s.To)
	if err != nil {
		return err
	}
	var data, lineEnd []byte
	var text string
	if s.Text != nil {
		text, err = r.expand("send", s.Text)
		if err != nil {
			return err
		}
		le := s.LineEnding
		if le == "" {
			le = r.seq.Device(s.To).LineEnding
		}
		lineEnd = steps.LineEndingBytes(le)
		data = append([]byte(text), lineEnd...)
	} else {
		data = s.Bytes
	}
	synced, err := r.syncConsole(ctx, s, c)
	if err != nil {
		return err
	}
	atPrompt, err := r.waitPrompt(ctx, s, c)
	if err != nil {
		return err
	}
	wctx := ctx
	if s.Timeout > 0 && len(s.Expect) == 0 {
		var cancel context.CancelFunc
		wctx, cancel = context.WithTimeoutCause(ctx, s.Timeout, errStepTimeout)
		defer cancel()
	}
	r.emit(Event{Type: ConsoleInput, Console: s.To, Data: data})
	// The connection the send goes out on: a reset it causes may
	// reconnect the console before the send returns.
	conn := opens(c)
	// What the port holds now came before the send: its reply, the
	// prompt that ends it and fail_on matches are looked for after it.
	if err := catchUp(wctx, s.To, c); err != nil {
		return err
	}
	cursor, err := c.Write(wctx, data)
	r.endTimed()
	if err == nil && len(s.Expect) == 0 {
		r.wrote = time.Now()
	}
	if err != nil {
		return fmt.Errorf("send to %s: %w", s.To, err)
	}
	r.cursor[s.To] = cursor
	res.Data = map[string]any{"bytes": len(data), "cursor": cursor, "sent": sentValue(data)}
	if atPrompt || synced {
		res.Data["at_prompt"] = true
	}
	if synced {
		res.Data["synced"] = true
	}
	res.Message = "sent " + quoted(data)
	reply := cursor
	if dev := r.seq.Device(s.To); dev != nil && dev.Echo && s.Text != nil {
		if reply, err = r.awaitEcho(ctx, s, c, text, lineEnd, cursor); err != nil {
			return err
		}
		r.cursor[s.To] = reply
		res.Data["reply"] = reply
	}
	r.setLastSend(s.To, c, reply, conn, reply != cursor)
	if len(s.Expect) == 0 {
		return nil
	}
	return r.expect(ctx, s, res, c, reply, reply != cursor)
}

func (r *run) repeat(ctx context.Context, s *steps.Step, res *StepResult, group string) error {
	t0 := time.Now()
	var maxLate time.Duration
	n := 0
	for i := 0; ; i++ {
		if s.Count > 0 && i >= s.Count {
			break
		}
		if s.Every > 0 {
			// Deadlines are absolute, so the period does not drift with
			// the time each iteration takes.
			deadline := t0.Add(time.Duration(i) * s.Every)
			if s.For > 0 && deadline.Sub(t0) >= s.For {
				break
			}
			if err := r.sleepTimed(ctx, deadline); err != nil {
				return err
			}
			if late := time.Since(deadline); late > maxLate {
				maxLate = late
			}
		} else if s.For > 0 && time.Since(t0) >= s.For {
			break
		}
		if s.As != "" {
			r.vars[s.As] = i
		}
		n++
		ok := r.steps(ctx, s.Steps, fmt.Sprintf("%s#%d.", res.Path, i), group)
		if !ok {
			break
		}
	}
	res.Data = map[string]any{"iterations": n}
	if s.Every > 0 {
		res.Data["max_late_us"] = maxLate.Microseconds()
		res.Data["every_ms"] = ms(s.Every)
	}
	if ctx.Err() != nil && r.open[len(r.open)-1] == Passed {
		return context.Cause(ctx)
	}
	return nil
}

// quoted shows bytes in double quotes with non-printable bytes escaped.
func quoted(b []byte) string { return `"` + stream.Quote(b) + `"` }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

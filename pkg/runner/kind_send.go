package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

func init() { leafRunners[steps.KindSend] = (*run).send }

// send writes the step's text (with its line ending) or bytes to its
// console, once the console is synced and back at its prompt, and waits
// for the echo and the expected reply when the step has them.
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
	if len(s.Expect) > 0 || (r.seq.Device(s.To) != nil && r.seq.Device(s.To).Echo && s.Text != nil) {
		// The device works on what was sent: the sink writes what it
		// holds meanwhile, before a fast reply leaves no wait to do it in.
		stream.Idle(ctx)
	}
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

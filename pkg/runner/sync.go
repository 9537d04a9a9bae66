package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// catchUpper is an optional ability of a console (serialx.Console has
// it): CatchUp waits until everything its port holds now is in the
// buffer, and returns the cursor past it. Output the device printed before
// a send is then behind the send's cursor however far the reader had got.
type catchUpper interface {
	CatchUp(ctx context.Context) (cursor int64, err error)
}

// catchUpOf finds the catchUpper of c or of a console it wraps, or nil.
func catchUpOf(c Console) catchUpper {
	for c != nil {
		if cu, ok := c.(catchUpper); ok {
			return cu
		}
		u, ok := c.(interface{ Unwrap() Console })
		if !ok {
			return nil
		}
		c = u.Unwrap()
	}
	return nil
}

// catchUp waits, before a send writes on device name, until what its port
// holds is in the buffer, so the send's cursor is past it. A console
// without the ability writes as it is.
func catchUp(ctx context.Context, name string, c Console) error {
	cu := catchUpOf(c)
	if cu == nil {
		return nil
	}
	if _, err := cu.CatchUp(ctx); err != nil {
		return fmt.Errorf("send to %s: take in what the port holds: %w", name, err)
	}
	return nil
}

// maxSyncLineEnds bounds the line endings one sync sends.
const maxSyncLineEnds = 3

// anyByte matches whatever arrives next.
var anyByte = func() stream.Pattern {
	p, err := stream.Regexp(`(?s).`)
	if err != nil {
		panic(err)
	}
	return p
}()

// syncConsole brings device s.To to its prompt before the first send on a
// connection that the console opened and nothing was sent on yet (not
// one reopened after an upload or a reconnect, where the send may be meant
// to stop an autoboot): it takes in what the device printed, and unless
// that ends with the prompt at the start of a line, sends the line ending
// and waits for the prompt; it ends once the prompt is the last thing
// received and the line has been quiet for the device's settle time, all
// within the device's sync_timeout. Only a
// device with a prompt is synced, only for a send (not send_ctrl) without
// wait_prompt: false, and only on a console that can take in what its port
// holds (see catchUpper). synced says whether it ran.
func (r *run) syncConsole(ctx context.Context, s *steps.Step, c Console) (synced bool, err error) {
	if s.Ctrl || s.WaitPrompt != nil && !*s.WaitPrompt {
		return false, nil
	}
	cu := catchUpOf(c)
	if cu == nil || opens(c) != 1 {
		// Not the console's first connection, or one whose opens it
		// cannot count: a connection borrowed from an MCP session, which
		// this run did not open.
		return false, nil
	}
	if _, sent := r.lastSend(s.To, c); sent {
		return false, nil
	}
	p, ok, err := r.prompt(s.To)
	if err != nil || !ok {
		return false, err
	}
	dev := r.seq.Device(s.To)
	timeout := dev.SyncTimeout
	if timeout <= 0 {
		timeout = r.seq.ExpectTimeout
	}
	settle := stream.DefaultSettle
	if dev.Settle != nil {
		settle = *dev.Settle
	}
	// The prompt at the end of what arrived, after a line break, or as
	// the whole answer to the sync's line ending: without echo, nothing
	// else comes before it.
	atEnd, err := stream.Regexp(`(?:` + p.String() + `)\z`)
	if err != nil {
		return false, &stepError{msg: fmt.Sprintf("prompt %s: %v", r.promptText(s.To), err)}
	}
	first, err := r.replyPrompt(s.To)
	if err != nil {
		return false, &stepError{msg: fmt.Sprintf("prompt %s: %v", r.promptText(s.To), err)}
	}
	alone, err := stream.Regexp(`\A(?:` + patternSource(r.rawPrompt(s.To)) + `)\z`)
	if err != nil {
		return false, &stepError{msg: fmt.Sprintf("prompt %s: %v", r.promptText(s.To), err)}
	}
	answer := int64(-1) // where the answer to the last line ending began
	lineEnd := steps.LineEndingBytes(dev.LineEnding)
	sctx, cancel := context.WithTimeoutCause(ctx, timeout, errStepTimeout)
	defer cancel()
	st := syncState{timeout: timeout, settle: settle}
	for {
		end, err := cu.CatchUp(sctx)
		if err != nil {
			return false, r.syncErr(ctx, sctx, s, c, st, err)
		}
		if atPrompt(c, answer, atEnd, alone) {
			// At the prompt; done once nothing follows it for the
			// settle time: a banner still printing, or a second prompt
			// answering the sync's own line ending, would.
			quiet, err := quietAfter(sctx, c, end, settle)
			if err != nil {
				return false, r.syncErr(ctx, sctx, s, c, st, err)
			}
			if quiet {
				return true, nil
			}
			st.busy = true
			continue
		}
		st.busy = false
		from := end
		want := []stream.Pattern{p}
		if st.sent < maxSyncLineEnds && len(lineEnd) > 0 {
			r.emit(Event{Type: ConsoleInput, Console: s.To, Data: lineEnd})
			if from, err = c.Write(sctx, lineEnd); err != nil {
				return false, fmt.Errorf("sync %s: send the line ending: %w", s.To, err)
			}
			answer = from
			want = append(want, first)
			st.sent++
		}
		if _, err := c.Expect(sctx, from, want, nil); err != nil {
			return false, r.syncErr(ctx, sctx, s, c, st, err)
		}
	}
}

// atPrompt reports whether what c holds ends with its prompt: after a
// line break (atEnd), or as all that arrived since offset answer (alone),
// where the answer to a line ending began (-1: none was sent).
func atPrompt(c Console, answer int64, atEnd, alone stream.Pattern) bool {
	tail := c.Tail(0, 4096)
	if _, ok := stream.Find(tail, []stream.Pattern{atEnd}); ok {
		return true
	}
	n := c.Cursor() - answer
	if answer < 0 || n <= 0 || n > int64(len(tail)) {
		return false
	}
	_, ok := stream.Find(tail[int64(len(tail))-n:], []stream.Pattern{alone})
	return ok
}

// syncState is how far a sync got, for its error.
type syncState struct {
	timeout, settle time.Duration
	sent            int  // line endings sent
	busy            bool // output still arriving when last looked
}

// errQuiet ends a wait for output that the line stayed quiet through.
var errQuiet = errors.New("the line stayed quiet")

// quietAfter waits until nothing has arrived after offset end for d, and
// reports false when something arrived first.
func quietAfter(ctx context.Context, c Console, end int64, d time.Duration) (bool, error) {
	if d <= 0 {
		return c.Cursor() <= end, nil
	}
	qctx, cancel := context.WithTimeoutCause(ctx, d, errQuiet)
	defer cancel()
	_, err := c.Expect(stream.WithSettle(qctx, 0), end, []stream.Pattern{anyByte}, nil)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(context.Cause(qctx), errQuiet) && ctx.Err() == nil:
		return true, nil
	}
	return false, err
}

// syncErr says why the sync of step s's device did not end at its prompt.
func (r *run) syncErr(ctx, sctx context.Context, s *steps.Step, c Console, st syncState, err error) error {
	switch {
	case errors.Is(context.Cause(sctx), errStepTimeout) && ctx.Err() == nil:
		if derr := awayErr(c); derr != nil {
			return fmt.Errorf("sync %s: timed out after %s: %w", s.To, st.timeout, derr)
		}
		tail := c.Tail(10, 2048)
		var msg string
		switch {
		case st.busy:
			msg = fmt.Sprintf("the device kept printing for the whole sync_timeout of %s: the console sync waits for it to show its prompt %s and then be quiet for %s, so nothing was sent",
				st.timeout, r.promptText(s.To), st.settle)
		case st.sent > 0:
			times := "once"
			if st.sent > 1 {
				times = fmt.Sprintf("%d times", st.sent)
			}
			msg = fmt.Sprintf("the device did not show its prompt %s within the sync_timeout of %s, though hilrun sent the line ending %s to ask for it, so nothing was sent",
				r.promptText(s.To), st.timeout, times)
		default:
			msg = fmt.Sprintf("the device did not show its prompt %s within the sync_timeout of %s, so nothing was sent", r.promptText(s.To), st.timeout)
		}
		msg += " (wait_prompt: false sends at once)"
		if l := lastLine(tail); l != "" {
			msg += "; last received: " + quoted([]byte(l))
		} else {
			msg += "; nothing received"
		}
		msg += r.lineStartHint(s.To, tail)
		return &stepError{msg: msg, expected: r.promptText(s.To), received: stream.Printable(tail)}
	case ctx.Err() != nil:
		return fmt.Errorf("sync %s: %w", s.To, context.Cause(ctx))
	}
	return fmt.Errorf("sync %s: %w", s.To, err)
}

// lineStartHint explains a timed-out wait for the prompt of device name
// when tail ends with the prompt, but not at the start of a line: a
// prompt counts only after a line break, and the hint shows where the
// last line began. It is "" otherwise.
func (r *run) lineStartHint(name string, tail []byte) string {
	dev := r.seq.Device(name)
	if dev == nil || dev.Prompt == nil {
		return ""
	}
	p, err := dev.Prompt.Compile(r.lookup)
	if err != nil {
		return ""
	}
	atEnd, err := stream.Regexp(`(?:` + patternSource(p) + `)\z`)
	if err != nil {
		return ""
	}
	m, ok := stream.Find(tail, []stream.Pattern{atEnd})
	if !ok {
		return ""
	}
	before := tail[:m.Start]
	i := bytes.LastIndexAny(before, "\r\n")
	if i < 0 {
		return fmt.Sprintf("; %s arrived, but a prompt counts only at the start of a line, and no line break came before it in the last %d bytes received", r.promptText(name), len(tail))
	}
	return fmt.Sprintf("; %s arrived, but a prompt counts only at the start of a line, and the last line began %d bytes before it: %s",
		r.promptText(name), len(before)-i-1, quoted(tail[i:]))
}

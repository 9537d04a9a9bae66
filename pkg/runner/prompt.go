package runner

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// SendMark is where the reply to a device's last send began (after its
// echo), and on which connection to the device: Opens is the console's
// count of port opens then (see Console's optional Opens; 0 without it).
type SendMark struct {
	Offset int64
	Opens  int64
	// LineStart says that the reply began at the start of a line: the
	// echo and its line ending came just before Offset, so a prompt right
	// at Offset counts (see atLineStart).
	LineStart bool
}

// sendMarker is an optional ability of a console lent to several runs, as
// the REPL lends its consoles to each line: it keeps the SendMark of the
// last send from one run to the next, so that the first send of the next
// run waits for the prompt too.
type sendMarker interface {
	// LastSend returns the mark; ok is false before the first send.
	LastSend() (m SendMark, ok bool)
	SetLastSend(m SendMark)
}

// opens is the count of port opens of c or of a console it wraps
// (serialx.Console has Opens), or 0.
func opens(c Console) int64 {
	for c != nil {
		if o, ok := c.(interface{ Opens() int64 }); ok {
			return o.Opens()
		}
		u, ok := c.(interface{ Unwrap() Console })
		if !ok {
			return 0
		}
		c = u.Unwrap()
	}
	return 0
}

// prompt returns the compiled prompt of device name; ok is false when it
// has none.
func (r *run) prompt(name string) (p stream.Pattern, ok bool, err error) {
	if ps := r.staticPrompt(name); ps != nil {
		p, ok, err = ps.line, ps.ok, ps.lineErr
	} else {
		p, ok, err = DevicePrompt(r.seq.Device(name), r.lookup)
	}
	if err != nil {
		return stream.Pattern{}, false, &stepError{msg: err.Error()}
	}
	return p, ok, nil
}

// rawPrompt is device name's prompt as written, not bound to the start of
// a line; call it after prompt found one.
func (r *run) rawPrompt(name string) stream.Pattern {
	p, _ := r.seq.Device(name).Prompt.Compile(r.lookup)
	return p
}

// promptText is device name's prompt as written, for messages: "=> " or
// /regexp/.
func (r *run) promptText(name string) string {
	p := r.seq.Device(name).Prompt
	if p.Regex {
		return p.String()
	}
	return strconv.Quote(p.Text.Raw)
}

// DevicePrompt returns the pattern that finds dev's prompt in its output
// (see atLineStart), with lookup filling in its references; ok is false
// when dev (which may be nil) has no prompt.
func DevicePrompt(dev *steps.Device, lookup steps.Lookup) (p stream.Pattern, ok bool, err error) {
	if dev == nil || dev.Prompt == nil {
		return stream.Pattern{}, false, nil
	}
	p, err = dev.Prompt.Compile(lookup)
	if err == nil {
		p, err = atLineStart(p)
	}
	if err != nil {
		return stream.Pattern{}, false, fmt.Errorf("prompt %s of device %s: %w", dev.Prompt.String(), dev.Name, err)
	}
	return p, true, nil
}

// atLineStart makes a prompt match only at the start of a line, after a
// line break, the way a console prints it: U-Boot's "=> " is also inside
// the line "crc32 for 40200000 ... 40200007 ==> 16647872". The match
// includes the line break.
func atLineStart(p stream.Pattern) (stream.Pattern, error) {
	return stream.Regexp(`[\r\n](?:` + patternSource(p) + `)`)
}

// atReplyStart makes a prompt match right where a search begins, for a
// reply that begins at the start of a line (after an echo and its line
// ending): a command that printed nothing answers with the prompt alone.
func atReplyStart(p stream.Pattern) (stream.Pattern, error) {
	return stream.Regexp(`\A(?:` + patternSource(p) + `)`)
}

// patternSource is p as a regexp.
func patternSource(p stream.Pattern) string {
	if p.IsRegexp() {
		return p.String()
	}
	return regexp.QuoteMeta(p.String())
}

// marker finds the sendMarker of c or of a console it wraps.
func marker(c Console) sendMarker {
	for c != nil {
		if m, ok := c.(sendMarker); ok {
			return m
		}
		u, ok := c.(interface{ Unwrap() Console })
		if !ok {
			return nil
		}
		c = u.Unwrap()
	}
	return nil
}

// lastSend is where the reply to the previous send on device name began;
// ok is false when there was none on the console's current connection (a
// reconnect or a port handed back after an upload starts a fresh one).
func (r *run) lastSend(name string, c Console) (m SendMark, ok bool) {
	if mk := marker(c); mk != nil {
		m, ok = mk.LastSend()
	} else {
		m, ok = r.sent[name]
	}
	if !ok || m.Opens != opens(c) {
		return SendMark{}, false
	}
	return m, true
}

// setLastSend marks a send whose reply began at off (at the start of a
// line when lineStart), written on the connection that was the console's
// count conn of opens.
func (r *run) setLastSend(name string, c Console, off, conn int64, lineStart bool) {
	m := SendMark{Offset: off, Opens: conn, LineStart: lineStart}
	r.sent[name] = m
	if mk := marker(c); mk != nil {
		mk.SetLastSend(m)
	}
}

// stepTimeout is how long a step's waits for the device may take: its own
// timeout, else the sequence's expect timeout.
func (r *run) stepTimeout(s *steps.Step) time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return r.seq.ExpectTimeout
}

// waitPrompt waits, before send s goes out, until the device is back at
// its prompt: a prompt that began after the reply to the previous send
// did. A send to a device without a prompt, a send_ctrl, a send with
// wait_prompt: false and the first send on a connection (after opening,
// reconnecting or taking the port back from an upload) do not wait; the
// first on a connection the console just opened is synced instead (see
// syncConsole).
// waited says whether it found the prompt.
func (r *run) waitPrompt(ctx context.Context, s *steps.Step, c Console) (waited bool, err error) {
	if s.Ctrl || s.WaitPrompt != nil && !*s.WaitPrompt {
		return false, nil
	}
	p, ok, err := r.prompt(s.To)
	if err != nil || !ok {
		return false, err
	}
	last, ok := r.lastSend(s.To, c)
	if !ok {
		return false, nil
	}
	from := last.Offset
	if last.LineStart {
		from-- // the line break that a prompt right at the reply follows
	}
	return true, r.awaitPrompt(ctx, s, c, p, from)
}

func (r *run) awaitPrompt(ctx context.Context, s *steps.Step, c Console, p stream.Pattern, from int64) error {
	failOn, err := r.patterns(s.FailOn)
	if err != nil {
		return err
	}
	timeout := r.stepTimeout(s)
	wctx, cancel := context.WithTimeoutCause(ctx, timeout, errStepTimeout)
	defer cancel()
	_, err = c.Expect(wctx, from, []stream.Pattern{p}, failOn)
	if err == nil {
		return nil
	}
	tail := c.Tail(10, 2048)
	var fe *stream.FailOnError
	switch {
	case errors.As(err, &fe):
		return &stepError{msg: fe.Error() + " (while waiting for the prompt)", received: excerpt(c, fe.Offset)}
	case errors.Is(context.Cause(wctx), errStepTimeout) && ctx.Err() == nil:
		if derr := awayErr(c); derr != nil {
			return fmt.Errorf("wait for the prompt of %s: timed out after %s: %w", s.To, timeout, derr)
		}
		msg := fmt.Sprintf("the device did not come back to its prompt %s within %s, so nothing was sent (wait_prompt: false sends at once)", r.promptText(s.To), timeout)
		if l := lastLine(tail); l != "" {
			msg += "; last received: " + quoted([]byte(l))
		}
		msg += r.lineStartHint(s.To, tail)
		return &stepError{msg: msg, expected: r.promptText(s.To), received: stream.Printable(tail)}
	case ctx.Err() != nil:
		return fmt.Errorf("wait for the prompt: %w", context.Cause(ctx))
	}
	return fmt.Errorf("wait for the prompt of %s: %w", s.To, err)
}

// lineEnds is where an echoed line ends, line ending and all: devices
// answer a carriage return with \r\n, some with \n\r, \r\r\n, \n or \r
// alone. The longest of these that arrived is taken: one that more bytes
// could still lengthen (a \r that a \n may follow) waits for the next
// byte or for the line to be quiet for the settle time.
var lineEnds = func() []stream.Pattern {
	p, err := stream.Regexp(`\r\r\n|\r\n|\n\r|\n|\r`)
	if err != nil {
		panic(err)
	}
	return []stream.Pattern{p}
}()

// awaitEcho waits for a device with echo: true to echo the line text sent
// at cursor, and returns the offset just past the echo and its whole line
// ending (see lineEnds), where the reply begins. The echo is the
// first line that arrives after the send; it must end with text (a prompt
// that arrived late may precede it). A line that differs is a failure: the
// device lost or changed characters, and whatever it does next answers
// some other command. Text with a line break in it, or sent without a
// line ending, is not checked: the reply begins at cursor.
func (r *run) awaitEcho(ctx context.Context, s *steps.Step, c Console, text string, lineEnd []byte, cursor int64) (int64, error) {
	if strings.ContainsAny(text, "\r\n") || len(lineEnd) == 0 {
		return cursor, nil
	}
	timeout := r.stepTimeout(s)
	ectx, cancel := context.WithTimeoutCause(ctx, timeout, errStepTimeout)
	defer cancel()
	ectx = r.settle(ectx, s)
	m, err := c.Expect(ectx, cursor, lineEnds, nil)
	if err != nil {
		return 0, echoErr(ctx, ectx, s, c, text, timeout, err)
	}

	for {
		line := strings.ReplaceAll(string(m.Data[:len(m.Data)-int(m.End-m.Start)]), "\r", "")
		if strings.HasSuffix(line, text) {
			return m.End, nil
		}
		if echo, ok := lossy(line, text); ok {
			return 0, &stepError{
				msg: fmt.Sprintf("the device echoed %s for %s: it lost characters (was it still busy with the previous command? a prompt: makes sends wait for it)",
					quoted([]byte(echo)), quoted([]byte(text))),
				expected: text, received: line,
			}
		}
		// A line that is not the echo: output of the previous command
		// still arriving.
		if m, err = c.Expect(ectx, m.End, lineEnds, nil); err != nil {
			return 0, echoErr(ctx, ectx, s, c, text, timeout, err)
		}
	}
}

// lossy reports whether line ends in text with a few characters lost, and
// returns that end: its last character is text's, and from the end, at
// least three quarters of text's characters are found in it in order with
// none added.
func lossy(line, text string) (string, bool) {
	if line == "" || text == "" || line[len(line)-1] != text[len(text)-1] {
		return "", false
	}
	i, j := len(line)-1, len(text)-1
	for i >= 0 && j >= 0 {
		if line[i] == text[j] {
			i--
		}
		j--
	}
	kept := len(line) - 1 - i
	return line[i+1:], kept < len(text) && 4*kept >= 3*len(text)
}

// untilPrompt says whether the expect of step s ends at its device's next
// prompt, and returns the prompt. A send's expect does unless it says
// until_prompt: false: its reply is the output before the prompt. A
// standalone expect does only with until_prompt: true: it often waits
// for what comes after a prompt (a reboot's banner after a power cycle).
func (r *run) untilPrompt(s *steps.Step) (stream.Pattern, bool, error) {
	on := s.Kind == steps.KindSend
	if s.UntilPrompt != nil {
		on = *s.UntilPrompt
	}
	if !on {
		return stream.Pattern{}, false, nil
	}
	return r.prompt(s.To)
}

// pastPrompt reports whether match m (of a pattern other than the prompt)
// runs past the end of the first prompt within it: it then reaches into
// output that belongs to the next command.
func pastPrompt(m stream.Match, prompt stream.Pattern) bool {
	rel := m.Start - (m.End - int64(len(m.Data)))
	if rel < 0 || rel > int64(len(m.Data)) {
		return false
	}
	pm, ok := stream.Find(m.Data[rel:], []stream.Pattern{prompt})
	return ok && pm.End < int64(len(m.Data))-rel
}

// echoErr says why the echo of text did not arrive.
func echoErr(ctx, ectx context.Context, s *steps.Step, c Console, text string, timeout time.Duration, err error) error {
	switch {
	case errors.Is(context.Cause(ectx), errStepTimeout) && ctx.Err() == nil:
		if derr := awayErr(c); derr != nil {
			return fmt.Errorf("wait for the echo on %s: timed out after %s: %w", s.To, timeout, derr)
		}
		return &stepError{
			msg:      fmt.Sprintf("no echo of %s within %s (the device has echo: true)", quoted([]byte(text)), timeout),
			expected: text, received: stream.Printable(c.Tail(10, 2048)),
		}
	case ctx.Err() != nil:
		return fmt.Errorf("wait for the echo: %w", context.Cause(ctx))
	}
	return fmt.Errorf("wait for the echo on %s: %w", s.To, err)
}

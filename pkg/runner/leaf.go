package runner

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
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
	steps.KindDelay:   (*run).delay,
	steps.KindCapture: (*run).capture,
	steps.KindAssert: func(r *run, ctx context.Context, s *steps.Step, res *StepResult) error {
		return r.assert(ctx, s, res)
	},
	steps.KindSet: func(r *run, ctx context.Context, s *steps.Step, res *StepResult) error {
		return r.set(ctx, s, res)
	},
	steps.KindMemRead:       (*run).memRead,
	steps.KindMemWrite:      (*run).memWrite,
	steps.KindMemPoll:       (*run).memPoll,
	steps.KindHalt:          (*run).debugger,
	steps.KindResume:        (*run).debugger,
	steps.KindReset:         (*run).debugger,
	steps.KindOpenOCD:       (*run).debugger,
	steps.KindMonitor:       (*run).debugger,
	steps.KindBuild:         (*run).build,
	steps.KindUpload:        (*run).build,
	steps.KindPIOTest:       (*run).build,
	steps.KindCamera:        (*run).camera,
	steps.KindLines:         (*run).lines,
	steps.KindBreak:         (*run).lines,
	steps.KindResetSequence: (*run).lines,
	steps.KindExec:          (*run).exec,
	steps.KindPower:         (*run).power,
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

func (r *run) patterns(specs []*steps.PatternSpec) ([]stream.Pattern, error) {
	out := make([]stream.Pattern, 0, len(specs))
	for _, p := range specs {
		if err := r.checkPattern(p); err != nil {
			return nil, err
		}
		pat, err := p.Compile(r.lookup)
		if err != nil {
			return nil, &stepError{msg: fmt.Sprintf("pattern %s: %v", p.String(), err)}
		}
		out = append(out, pat)
	}
	return out, nil
}

func describe(ps []stream.Pattern) string {
	q := make([]string, len(ps))
	for i, p := range ps {
		if p.IsRegexp() {
			q[i] = "/" + p.String() + "/"
		} else {
			q[i] = strconv.Quote(p.String())
		}
	}
	if len(q) == 1 {
		return q[0]
	}
	return "any of " + strings.Join(q, ", ")
}

// lastLine is the last non-empty line of b, for one-line messages.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimRight(string(b), "\r\n"), "\n")
	return strings.TrimRight(lines[len(lines)-1], "\r")
}

// expect runs the expect of step s from cursor from; lineStart says that
// from is at the start of a line (after an echo), where a prompt counts.
func (r *run) expect(ctx context.Context, s *steps.Step, res *StepResult, c Console, from int64, lineStart bool) error {
	want, err := r.patterns(s.Expect)
	if err != nil {
		return err
	}
	if r.seq.FilterResponses {
		if want, err = responseLines(want); err != nil {
			return &stepError{msg: err.Error()}
		}
	}
	failOn, err := r.patterns(s.FailOn)
	if err != nil {
		return err
	}
	prompt, untilPrompt, err := r.untilPrompt(s)
	if err != nil {
		return err
	}
	search := want
	if untilPrompt {
		// The prompt races the patterns: when it comes first, the
		// command's output is over without them.
		search = append(slices.Clip(want), prompt)
		if lineStart {
			// Also the prompt alone, from a command that printed
			// nothing: its line break was the echo's.
			first, err := atReplyStart(r.rawPrompt(s.To))
			if err != nil {
				return &stepError{msg: fmt.Sprintf("prompt %s: %v", r.promptText(s.To), err)}
			}
			search = append(search, first)
		}
	}
	timeout := s.Timeout
	if timeout == 0 {
		timeout = r.seq.ExpectTimeout
	}
	ectx, cancel := context.WithTimeoutCause(ctx, timeout, errStepTimeout)
	defer cancel()
	began := time.Now()
	m, err := c.Expect(r.settle(ectx, s), from, search, failOn)
	waited := time.Since(began)
	if res.Data == nil {
		res.Data = map[string]any{}
	}
	res.Data["waited_ms"] = ms(waited)
	if err != nil {
		tail := c.Tail(10, 2048)
		var fe *stream.FailOnError
		if berr, ok := bufferFailure(err, s.To, c); ok {
			return berr
		}
		switch {
		case errors.As(err, &fe):
			return &stepError{msg: fe.Error(), expected: describe(want), received: excerpt(c, fe.Offset)}
		case errors.Is(context.Cause(ectx), errStepTimeout) && ctx.Err() == nil:
			if derr := awayErr(c); derr != nil {
				return fmt.Errorf("expect %s on %s: timed out after %s: %w", describe(want), s.To, timeout, derr)
			}
			msg := fmt.Sprintf("timed out after %s waiting for %s", timeout, describe(want))
			if l := lastLine(tail); l != "" {
				msg += "; last received: " + quoted([]byte(l))
			} else {
				msg += "; nothing received"
			}
			msg += baudHint(tail, r.seq.Device(s.To))
			return &stepError{msg: msg, expected: describe(want), received: stream.Printable(tail)}
		case ctx.Err() != nil:
			// The run was stopped (fail_on elsewhere, sequence timeout,
			// interrupt): report that cause.
			return fmt.Errorf("expect %s: %w", describe(want), context.Cause(ctx))
		}
		return fmt.Errorf("expect %s on %s: %w", describe(want), s.To, err)
	}
	if untilPrompt && m.Index > len(want) {
		m.Index = len(want) // the prompt, right at the reply
	}
	if untilPrompt && m.Index == len(want) {
		// The prompt came first; a pattern may still match within it
		// (expect: "=> " on a device whose prompt is "=> ").
		if f, ok := stream.Find([]byte(m.Groups[0]), want); ok {
			f.Start, f.End = m.Start+f.Start, m.Start+f.End
			f.From, f.Data = m.From, m.Data[:len(m.Data)-int(m.End-f.End)]
			m = f
		}
	}
	if untilPrompt && (m.Index == len(want) || pastPrompt(m, prompt)) {
		out := m.Data
		return &stepError{
			msg: fmt.Sprintf("the device was back at its prompt %s without printing %s; received %s (until_prompt: false looks past the prompt)",
				r.promptText(s.To), describe(want), quoted(stream.Tail(out, 10, 2048))),
			expected: describe(want), received: stream.Printable(out),
		}
	}
	r.cursor[s.To] = m.End
	res.Data["match"] = m.Groups[0]
	res.Data["offset"] = m.Start
	if len(want) > 1 {
		res.Data["index"] = m.Index
	}
	res.Message = "matched " + quoted([]byte(m.Groups[0]))
	return r.saveMatch(s, res, m, want[m.Index])
}

// settle gives ctx the settle time of step s: its own, else its device's,
// else stream's default. It is how long a regexp match that bytes still
// arriving could change waits for the line to go quiet.
func (r *run) settle(ctx context.Context, s *steps.Step) context.Context {
	if s.Settle != nil {
		return stream.WithSettle(ctx, *s.Settle)
	}
	if dev := r.seq.Device(s.To); dev != nil && dev.Settle != nil {
		return stream.WithSettle(ctx, *dev.Settle)
	}
	return ctx
}

func (r *run) saveMatch(s *steps.Step, res *StepResult, m stream.Match, p stream.Pattern) error {
	save := func(name, val string) error {
		if err := r.setVar("save", name, val); err != nil {
			return err
		}
		if res.Saved == nil {
			res.Saved = map[string]any{}
		}
		res.Saved[name] = val
		return nil
	}
	group := func(i int) (string, bool) {
		if i < 0 || i >= len(m.Groups) {
			return "", false
		}
		return m.Groups[i], true
	}
	for i, n := range m.Names {
		if n != "" && i < len(m.Groups) {
			if err := save(n, m.Groups[i]); err != nil {
				return err
			}
		}
	}
	for _, sv := range s.Save {
		idx := sv.Group
		switch {
		case sv.GroupName != "":
			idx = slices.Index(m.Names, sv.GroupName)
		case idx < 0:
			idx = 0
			if len(m.Groups) > 1 {
				idx = 1
			}
		}
		v, ok := group(idx)
		if !ok {
			return &stepError{msg: fmt.Sprintf("save %s: the pattern %s that matched has no such group", sv.Var, describe([]stream.Pattern{p}))}
		}
		if err := save(sv.Var, v); err != nil {
			return err
		}
	}
	return nil
}

// delay waits s.Delay. Right after a send that expects nothing it counts
// from the end of that send's write, not from its own start, so the step
// bookkeeping between the two does not lengthen the gap the device sees
// between the writes (a sender that writes then sleeps counts the same).
func (r *run) delay(ctx context.Context, s *steps.Step, res *StepResult) error {
	start := time.Now()
	if !r.wrote.IsZero() {
		start, r.wrote = r.wrote, time.Time{}
	}
	err := r.sleepTimed(ctx, start.Add(s.Delay))
	actual := time.Since(start)
	res.Data = map[string]any{
		"requested_us": s.Delay.Microseconds(),
		"actual_us":    actual.Microseconds(),
	}
	return err
}

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

func (r *run) assert(ctx context.Context, s *steps.Step, res *StepResult) error {
	out, err := r.eval(ctx, "assert "+s.Assert.Src, s.Assert, nil)
	values := r.describeNames(s.Assert.Names)
	if se := (*stepError)(nil); errors.As(err, &se) {
		se.expected, se.received = s.Assert.Src, values
	}
	if err != nil {
		return err
	}
	ok, isBool := out.(bool)
	if !isBool {
		return &stepError{msg: fmt.Sprintf("assert %s gave %v, not true or false", s.Assert.Src, out), expected: s.Assert.Src, received: values}
	}
	if !ok {
		msg := "assert failed: " + s.Assert.Src
		if m, err := r.assertMessage(ctx, s); err != nil {
			msg += " (its message: " + err.Error() + ")"
		} else if m != "" {
			msg = m + " (" + s.Assert.Src + ")"
		}
		if values != "" {
			msg += " with " + values
		}
		return &stepError{msg: msg, expected: s.Assert.Src, received: values}
	}
	res.Message = "true"
	return nil
}

// assertMessage is what failed assert s says: its message: text with the
// variables filled in, or its {expr: ...} evaluated; "" when it has none.
func (r *run) assertMessage(ctx context.Context, s *steps.Step) (string, error) {
	switch {
	case s.MessageExpr != nil:
		out, err := r.eval(ctx, "message "+s.MessageExpr.Src, s.MessageExpr, nil)
		if err != nil {
			return "", err
		}
		return fmt.Sprint(out), nil
	case s.MessageText != nil:
		return r.expand("message", s.MessageText)
	}
	return "", nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// describeNames shows the values of the variables an expression reads.
func (r *run) describeNames(names []string) string {
	var parts []string
	for _, n := range names {
		v, ok := r.vars[n]
		switch {
		case !ok:
			parts = append(parts, n+" undefined")
		case isText(v):
			parts = append(parts, fmt.Sprintf("%s=%q", n, v))
		default:
			parts = append(parts, fmt.Sprintf("%s=%v", n, v))
		}
	}
	return strings.Join(parts, ", ")
}

func isText(v any) bool {
	_, ok := v.(string)
	return ok
}

func (r *run) set(ctx context.Context, s *steps.Step, res *StepResult) error {
	res.Saved = map[string]any{}
	for _, a := range s.Set {
		var v any
		switch {
		case a.Text != nil:
			t, err := r.expand("set "+a.Name, a.Text)
			if err != nil {
				return err
			}
			v = t
		case a.Expr != nil:
			out, err := r.eval(ctx, fmt.Sprintf("set %s = %s", a.Name, a.Expr.Src), a.Expr, nil)
			if err != nil {
				return err
			}
			v = out
		default:
			v = a.Value
		}
		if err := r.setVar("set", a.Name, v); err != nil {
			return err
		}
		res.Saved[a.Name] = v
	}
	return nil
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

// responseLines narrows patterns to lines that begin with ">": the pattern
// must match within such a line. Submatch numbers are unchanged.
func responseLines(ps []stream.Pattern) ([]stream.Pattern, error) {
	out := make([]stream.Pattern, len(ps))
	for i, p := range ps {
		inner := regexp.QuoteMeta(p.String())
		if p.IsRegexp() {
			inner = p.String()
		}
		rp, err := stream.Regexp(`(?m)^>[^\r\n]*?(?:` + inner + `)`)
		if err != nil {
			return nil, fmt.Errorf("filter_responses: %w", err)
		}
		out[i] = rp
	}
	return out, nil
}

// quoted shows bytes in double quotes with non-printable bytes escaped.
func quoted(b []byte) string { return `"` + stream.Quote(b) + `"` }

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

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
			first, err := r.replyPrompt(s.To)
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
		return r.expectFailed(ctx, ectx, s, c, want, timeout, err)
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

// expectFailed is the error of an expect that ended without its match:
// a fail_on pattern, the step's timeout (with the last line received),
// the run stopped, or the console gone.
func (r *run) expectFailed(ctx, ectx context.Context, s *steps.Step, c Console, want []stream.Pattern, timeout time.Duration, err error) error {
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

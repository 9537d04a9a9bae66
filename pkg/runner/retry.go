package runner

import (
	"context"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// AttemptOutputBytes bounds the console excerpt each attempt keeps: the
// last bytes the consoles printed while it ran.
const AttemptOutputBytes = 4 << 10

// Executions counts the executions of steps that are not groups or
// repeats, by status.
type Executions struct {
	Passed      int `json:"passed,omitempty"`
	Failed      int `json:"failed,omitempty"`
	Errored     int `json:"error,omitempty"`
	Skipped     int `json:"skipped,omitempty"`
	Interrupted int `json:"interrupted,omitempty"`
}

// Add counts one execution with status st, or takes one away when n is
// -1.
func (e *Executions) Add(st Status, n int) {
	switch st {
	case Passed:
		e.Passed += n
	case Failed:
		e.Failed += n
	case Skipped:
		e.Skipped += n
	case Interrupted:
		e.Interrupted += n
	default:
		e.Errored += n
	}
}

// Total is the executions counted.
func (e Executions) Total() int {
	return e.Passed + e.Failed + e.Errored + e.Skipped + e.Interrupted
}

// AttemptResult is one attempt of a sequence or a group with retries.
type AttemptResult struct {
	// Scope is the path of the group retried, "" for the sequence.
	Scope string `json:"scope"`
	// Name is the group's or the sequence's name.
	Name string `json:"name"`
	// Attempt counts from 1; Of is the attempts there may be at most
	// (retries + 1): "attempt 2 of 3".
	Attempt int    `json:"attempt"`
	Of      int    `json:"of"`
	Status  Status `json:"status"`
	// Started is the offset from the start of the sequence.
	Started  time.Duration `json:"-"`
	Duration time.Duration `json:"-"`
	// Message is what the first step of the attempt that did not pass
	// said.
	Message string `json:"message,omitempty"`
	// Output is what the consoles printed during the attempt, its last
	// AttemptOutputBytes, with non-printable bytes escaped; a run with
	// several consoles heads each one's part "== NAME ==".
	Output string `json:"output,omitempty"`
	// Retried says another attempt followed this one.
	Retried bool `json:"retried,omitempty"`
	// Executions are the attempt's own, those of the attempts of groups
	// inside it that were retried left out.
	Executions Executions `json:"executions"`
}

// String is "attempt 2 of 3".
func (a *AttemptResult) String() string {
	return "attempt " + strconv.Itoa(a.Attempt) + " of " + strconv.Itoa(a.Of)
}

// attempt is an attempt being run.
type attempt struct {
	res   AttemptResult
	t0    time.Time
	marks map[string]int64 // per console, the transcript's total at the start
	execs Executions
}

// retryScope is a sequence or a group with retries, as retryScope runs it.
type retryScope struct {
	path, name string
	retries    int
	before     []*steps.Step
	// prefix is what the paths of the scope's steps begin with.
	prefix, group string
	body          []*steps.Step
}

// runAttempts runs sc until an attempt passes or none is left, each
// attempt after the first with sc's before_retry steps first and the
// variables as they were before the first. It returns the scope's
// status: that of the last attempt when it passed, else the worst of
// all, so an infrastructure error is never hidden by a failure after it.
// The scope's own steps stop the sequence as they would without retries.
func (r *run) runAttempts(ctx context.Context, sc retryScope) (Status, []AttemptResult) {
	vars, stepRes := maps.Clone(r.vars), maps.Clone(r.stepRes)
	seqStatus, seqErr := r.res.Status, r.res.Error
	worstSeen := Passed
	var out []AttemptResult
	for k := 1; ; k++ {
		a := r.beginAttempt(sc, k)
		if k > 1 {
			r.vars, r.stepRes = maps.Clone(vars), maps.Clone(stepRes)
			beforePrefix := sc.prefix + "before_retry."
			if r.steps(ctx, sc.before, beforePrefix, sc.group) {
				r.steps(ctx, sc.body, sc.prefix, sc.group)
			} else {
				r.skip(sc.body, 0, sc.prefix, sc.group)
			}
		} else {
			r.steps(ctx, sc.body, sc.prefix, sc.group)
		}
		st := r.closeContainer()
		worstSeen = worst(worstSeen, st)
		again := (st == Failed || st == Errored) && k <= sc.retries && ctx.Err() == nil
		out = append(out, r.endAttempt(a, st, again))
		if !again {
			if st == Passed {
				r.res.Status, r.res.Error = seqStatus, seqErr
				return Passed, out
			}
			return worstSeen, out
		}
	}
}

func (r *run) beginAttempt(sc retryScope, k int) *attempt {
	a := &attempt{
		res: AttemptResult{Scope: sc.path, Name: sc.name, Attempt: k, Of: sc.retries + 1, Status: Passed, Started: time.Since(r.start)},
		t0:  time.Now(), marks: map[string]int64{},
	}
	r.mu.Lock()
	for name, t := range r.trans {
		a.marks[name] = t.total()
	}
	r.mu.Unlock()
	r.open = append(r.open, Passed)
	r.attempts = append(r.attempts, a)
	return a
}

// endAttempt closes the innermost attempt, with status st, and reports
// it; retried says another follows, and its executions then leave the
// counts of the attempts around it.
func (r *run) endAttempt(a *attempt, st Status, retried bool) AttemptResult {
	r.attempts = r.attempts[:len(r.attempts)-1]
	a.res.Status, a.res.Retried, a.res.Duration = st, retried, time.Since(a.t0)
	a.res.Executions = a.execs
	a.res.Output = r.attemptOutput(a.marks)
	if retried {
		for _, outer := range r.attempts {
			outer.execs.Passed -= a.execs.Passed
			outer.execs.Failed -= a.execs.Failed
			outer.execs.Errored -= a.execs.Errored
			outer.execs.Skipped -= a.execs.Skipped
			outer.execs.Interrupted -= a.execs.Interrupted
		}
	}
	cp := a.res
	r.emit(Event{Type: AttemptFinished, Attempt: &cp})
	return a.res
}

// noteAttempt counts a finished step in the attempts it ran in, and
// keeps the first problem's message; r.mu is held, as the steps of
// branches count in the attempts around their parallel: step.
func (r *run) noteAttempt(res *StepResult) {
	if len(r.attempts) == 0 {
		return
	}
	res.Attempt = r.attempts[len(r.attempts)-1].res.Attempt
	for _, a := range r.attempts {
		if !steps.IsContainer(steps.Kind(res.Kind)) {
			a.execs.Add(res.Status, 1)
		}
		if a.res.Message == "" && res.Status != Passed && res.Status != Skipped {
			a.res.Message = res.Message
		}
	}
}

// attemptOutput is what the consoles printed since marks, their last
// AttemptOutputBytes.
func (r *run) attemptOutput(marks map[string]int64) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var parts []string
	for _, dev := range r.seq.Devices {
		t := r.trans[dev.Name]
		if t == nil {
			continue
		}
		n := t.total() - marks[dev.Name]
		data := t.bytes()
		n = min(n, int64(len(data)), AttemptOutputBytes)
		if n <= 0 {
			continue
		}
		text := stream.Printable(data[int64(len(data))-n:])
		if len(r.seq.Devices) > 1 {
			text = "== " + dev.Name + " ==\n" + text
		}
		parts = append(parts, text)
	}
	return strings.Join(parts, "\n")
}

// total is every byte the transcript was given, those dropped included.
func (t *transcript) total() int64 { return t.dropped + int64(len(t.buf)) }

// sequenceRetries is how many times the sequence runs again: its own
// retries:, else the run's.
func (r *run) sequenceRetries() int {
	if rt := r.seq.Retry; rt != nil && rt.Set {
		return rt.Count
	}
	return r.opts.Retries
}

// runSequenceSteps runs the sequence's steps, with its retries.
func (r *run) runSequenceSteps(ctx context.Context) {
	n := r.sequenceRetries()
	if n == 0 {
		r.steps(ctx, r.seq.Steps, "", "")
		return
	}
	st, list := r.runAttempts(ctx, retryScope{name: r.seq.Name, retries: n, before: r.seq.Retry.Before(), body: r.seq.Steps})
	r.res.Attempts = list
	r.flaky = r.flaky || (st == Passed && len(list) > 1)
}

// runGroup runs a group's steps, with its retries when it has them.
func (r *run) runGroup(ctx context.Context, s *steps.Step, res *StepResult, path, group string) {
	if s.Retry.Retries() == 0 {
		r.open = append(r.open, Passed)
		r.steps(ctx, s.Steps, path+".", group)
		res.Status = r.closeContainer()
		return
	}
	st, list := r.runAttempts(ctx, retryScope{path: path, name: s.Name, retries: s.Retry.Count, before: s.Retry.Before(),
		prefix: path + ".", group: group, body: s.Steps})
	res.Status, res.Attempts = st, list
	res.Flaky = st == Passed && len(list) > 1
	r.flaky = r.flaky || res.Flaky
}

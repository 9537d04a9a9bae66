package report

import (
	"fmt"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// Retries in Allure. Allure 2 shows a test case's retries from its
// results: the results that share a historyId are one test case, the
// latest by time is the one shown, and the others are listed under its
// Retries tab and hidden elsewhere (its RetryPlugin); a case with a
// retry that did not pass is marked flaky. So each earlier attempt of a
// test case (a retried sequence's top-level entry, or a top-level group
// with retries) is a result of its own with the case's historyId, and
// its own status, timing, steps and console excerpt; the last attempt's
// result sets statusDetails.flaky itself too, for readers that take the
// mark from the result alone. A group with retries nested inside a test
// case cannot be results of its own: its attempts that did not pass are
// steps of it.

// allureAttempts adds to n, the step of a group with retries, its
// attempts: a parameter that counts them, a step per attempt that did
// not pass with its message and console output (or, for a top-level
// group, the attempts for flush to write as results), and for a flaky
// group Allure's own flaky mark.
func (a *allureWriter) allureAttempts(n *allureStep, st *results.Step) {
	top := st.Path == results.TopKey(st.Path)
	if st.Attempt > 0 && !top {
		n.Name = fmt.Sprintf("attempt %d: %s", st.Attempt, n.Name)
	}
	if len(st.Attempts) == 0 {
		return
	}
	last := st.Attempts[len(st.Attempts)-1]
	n.Parameters = append(n.Parameters, allureParameter{Name: "attempts", Value: fmt.Sprintf("%d of %d", last.Attempt, last.Of)})
	if top && len(st.Attempts) > 1 {
		n.attempts = st.Attempts
	} else {
		for _, at := range results.Failed(st.Attempts) {
			start, stop := a.attemptSpan(&at)
			s := &allureStep{Name: at.Label(), Status: allureStatus(at.Status), Stage: "finished", Start: start, Stop: stop,
				StatusDetails: &allureDetails{Message: cleanText(at.Message), Trace: cleanText(at.Output)},
				Steps:         []*allureStep{}, Attachments: []allureAttach{}}
			n.Steps = append(n.Steps, s)
		}
	}
	if st.Flaky && st.Status == runner.Passed {
		n.StatusDetails = &allureDetails{Message: "flaky: passed on " + last.Label(), Flaky: true}
	}
}

// attemptSpan is when an attempt started and stopped, in epoch
// milliseconds.
func (a *allureWriter) attemptSpan(at *results.Attempt) (int64, int64) {
	start := a.seq.seq.StartedAt.Add(at.StartedMS.D())
	return start.UnixMilli(), start.Add(at.DurationMS.D()).UnixMilli()
}

// earlierAttempts writes a result for each attempt of the top-level group
// of r but its last, with the steps that ran in it, and returns the steps
// left for r, the last attempt's. r then starts when its attempt did, so
// that Allure takes it for the latest.
func (a *allureWriter) earlierAttempts(r *allureResult, attempts []results.Attempt) []*allureStep {
	steps := r.Steps
	for _, at := range attempts[:len(attempts)-1] {
		var mine, rest []*allureStep
		for _, s := range steps {
			if s.attempt == at.Attempt {
				mine = append(mine, s)
			} else {
				rest = append(rest, s)
			}
		}
		steps = rest
		start, stop := a.attemptSpan(&at)
		params := append([]allureParameter(nil), r.Parameters...)
		for i := range params {
			if params[i].Name == "attempts" {
				params[i].Value = fmt.Sprintf("%d of %d", at.Attempt, at.Of)
			}
		}
		e := &allureResult{Name: r.Name, Status: allureStatus(at.Status), Stage: "finished", Start: start, Stop: stop,
			StatusDetails: &allureDetails{Message: at.Label() + ": " + cleanText(at.Message), Trace: cleanText(at.Output)},
			Parameters:    params, Steps: append([]*allureStep{}, mine...), Attachments: []allureAttach{}, attempt: at.Attempt}
		a.writeResult(e, a.key)
	}
	last := attempts[len(attempts)-1]
	r.attempt = last.Attempt
	if start, _ := a.attemptSpan(&last); start > r.Start {
		r.Start = start
	}
	return append([]*allureStep{}, steps...)
}

// seqAttempt marks r, a test case of a sequence with retries, with the
// attempt it ran in: an earlier attempt says so in its message, and the
// last attempt's is flaky when it passed after one that did not.
func (a *allureWriter) seqAttempt(r *allureResult) {
	list := a.seq.seq.Attempts
	if r.attempt == 0 || len(list) < 2 || r.attempt > len(list) {
		return
	}
	at := list[r.attempt-1]
	if r.attempt < len(list) {
		if r.Status != "passed" && r.Status != "skipped" {
			a.retried[a.key] = true
		}
		d := allureDetails{Message: at.Label()}
		if r.StatusDetails != nil {
			d = *r.StatusDetails
			d.Message = at.Label() + ": " + d.Message
		}
		r.StatusDetails = &d
		return
	}
	if r.Status == "passed" && a.retried[a.key] {
		r.StatusDetails = &allureDetails{Message: "flaky: passed on " + at.Label(), Flaky: true}
	}
}

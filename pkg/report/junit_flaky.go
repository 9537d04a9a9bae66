package report

import (
	"encoding/xml"
	"fmt"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// rerunElem is one of Maven Surefire's elements for an attempt of a test
// case that did not pass: flakyFailure and flakyError on a case that
// passed at last, rerunFailure and rerunError on one that never did. Each
// has the attempt's message, type and its console output.
type rerunElem struct {
	XMLName   xml.Name
	Message   string `xml:"message,attr"`
	Type      string `xml:"type,attr"`
	Data      string `xml:",chardata"`
	SystemOut string `xml:"system-out,omitempty"`
}

// retriedCase is a testcase with the elements of its earlier attempts.
type retriedCase struct {
	*junit.Testcase
	Reruns []rerunElem
}

// attemptProblem is a testcase's failure in an attempt that was retried.
type attemptProblem struct {
	res     junit.Result
	errored bool
	attempt results.Attempt
}

// retryAttempt takes the end of an attempt of a group inside the entry
// being gathered: when another follows, what did not pass in it becomes
// one of the entry's earlier attempts, and the entry starts over.
func (cb *caseBuilder) retryAttempt(a *results.Attempt) {
	if !a.Retried || a.Scope == "" || cb.key == "" || results.TopKey(a.Scope) != cb.key {
		return
	}
	if p, ok := cb.problemResult(); ok {
		cb.earlier = append(cb.earlier, attemptProblem{res: *p, errored: cb.errored, attempt: *a})
	}
	cb.errored, cb.failed, cb.first = false, false, nil
	cb.problems, cb.more = 0, 0
	cb.body.Reset()
	cb.leaves, cb.skipped = 0, 0
	// The case's properties are the measurements of its last attempt, as
	// for a sequence's retries; the JSON report and the CSV keep every
	// attempt's.
	cb.props = nil
}

// problemResult is the failure or error of the case gathered so far.
func (cb *caseBuilder) problemResult() (*junit.Result, bool) {
	if !cb.errored && !cb.failed {
		return nil, false
	}
	body := cb.body.String()
	if cb.more > 0 {
		body += fmt.Sprintf("\n… and %d more steps that did not pass: the event stream lists every one\n", cb.more)
	}
	res := &junit.Result{Message: problemMessage(cb.first), Type: typeFailed, Data: body}
	switch {
	case cb.first.Status == runner.Interrupted:
		res.Type = typeInterrupted
	case cb.errored:
		res.Type = typeError
	}
	return res, true
}

// rerunElems are the elements of a case's earlier attempts: flaky ones
// when the case passed at last.
func rerunElems(earlier []attemptProblem, passed bool) []rerunElem {
	var out []rerunElem
	for _, p := range earlier {
		name := "rerunFailure"
		switch {
		case passed && p.errored:
			name = "flakyError"
		case passed:
			name = "flakyFailure"
		case p.errored:
			name = "rerunError"
		}
		head := p.attempt.Label() + ": "
		out = append(out, rerunElem{XMLName: xml.Name{Local: name}, Message: noAttachments(head + p.res.Message), Type: p.res.Type,
			Data: noAttachments(p.res.Data), SystemOut: noAttachments(cleanText(p.attempt.Output))})
	}
	return out
}

// seqRetries diverts the steps of a sequence's attempts that were
// retried to a builder of their own, whose failing testcases become the
// earlier attempts of the same entries in the last attempt.
type seqRetries struct {
	final   int // the sequence's last attempt; 0 without retries
	current int
	side    *caseBuilder
	// byName holds, by testcase name, what did not pass in earlier
	// attempts.
	byName map[string][]attemptProblem
	// pending are the problems of the attempt being read, until its
	// record says which attempt it was.
	pending []pendingCase
}

type pendingCase struct {
	name    string
	res     junit.Result
	errored bool
}

func newSeqRetries(s *seqSummary, final int, opts results.Options) *seqRetries {
	if final < 2 {
		return nil
	}
	sr := &seqRetries{final: final, current: 1, byName: map[string][]attemptProblem{}}
	sr.side = newCaseBuilder(s, opts, func(tc *junit.Testcase) {
		switch {
		case tc.Error != nil:
			sr.pending = append(sr.pending, pendingCase{tc.Name, *tc.Error, true})
		case tc.Failure != nil:
			sr.pending = append(sr.pending, pendingCase{tc.Name, *tc.Failure, false})
		}
	})
	return sr
}

// diverted reports whether st belongs to an attempt of the sequence that
// was retried, and takes it if so.
func (sr *seqRetries) diverted(st *results.Step) bool {
	if sr == nil || sr.current >= sr.final {
		return false
	}
	sr.side.add(st)
	return true
}

// attempt takes an attempt record: the end of a sequence's attempt moves
// its problems to byName.
func (sr *seqRetries) attempt(a *results.Attempt) bool {
	if sr == nil || a.Scope != "" || !a.Retried {
		return false
	}
	sr.side.flush()
	for _, p := range sr.pending {
		sr.byName[p.name] = append(sr.byName[p.name], attemptProblem{res: p.res, errored: p.errored, attempt: *a})
	}
	sr.pending = nil
	sr.current++
	return true
}

// finals reads the event file for the number of attempts of each
// sequence, which the passes after it need before the sequence ends.
func (jw *junitWriter) finals() error {
	z := &results.Summarizer{
		Options: jw.opts.Summary,
		OnStart: func(int, *results.Sequence) { jw.attempts = append(jw.attempts, 0) },
		OnEnd: func(_ int, seq *results.Sequence, _ results.Counts) {
			jw.attempts[len(jw.attempts)-1] = len(seq.Attempts)
		},
	}
	return results.Summarize(jw.events, z)
}

// onAttempt takes an attempt record in either pass.
func (jw *junitWriter) onAttempt(a *results.Attempt) {
	if !jw.retries.attempt(a) {
		jw.cb.retryAttempt(a)
	}
}

// encodeCase writes tc with the elements of its earlier attempts, if any.
func (jw *junitWriter) encodeCase(tc *junit.Testcase, earlier []attemptProblem) {
	if sr := jw.retries; sr != nil {
		earlier = append(sr.byName[tc.Name], earlier...)
	}
	if len(earlier) == 0 {
		jw.encode(tc, "testcase")
		return
	}
	safeCase(tc)
	passed := tc.Failure == nil && tc.Error == nil && tc.Skipped == nil
	v := retriedCase{Testcase: tc, Reruns: rerunElems(earlier, passed)}
	if jw.encErr == nil {
		jw.encErr = jw.enc.EncodeElement(v, xml.StartElement{Name: xml.Name{Local: "testcase"}})
	}
}

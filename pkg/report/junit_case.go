package report

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// caseBuilder gathers the steps of one top-level entry into a testcase, in
// memory bounded by the summary rule's caps.
type caseBuilder struct {
	seq  *seqSummary
	opts results.Options
	emit func(*junit.Testcase)
	// problem is set once any testcase of the sequence failed or errored.
	problem bool
	// cases counts the testcases of the sequence so far, and firstSkipped
	// says the first of them did not run; carry is the sequence's error,
	// for that testcase.
	cases        int
	firstSkipped bool
	carry        *junit.Testcase

	// key is the top-level entry being gathered, "" when none; opened is
	// its first step and span the time from its start to its end, for an
	// entry whose own step never came.
	key                   string
	opened                *results.Step
	start, end            time.Duration
	first                 *results.Step
	errored, failed       bool
	leaves, skipped       int
	problems, more        int
	body                  strings.Builder
	values                strings.Builder
	valueLines, moreValue int
	// pioCases are the test cases pio_test steps of the entry reported,
	// each a testcase of its own; pioOnly says the entry is one pio_test
	// step, which its cases then stand for.
	pioCases  []*junit.Testcase
	moreCases int
	pioOnly   bool
	// earlier are the entry's problems in attempts of a group in it
	// that were retried.
	earlier []attemptProblem
	// props are the properties of the entry's measurements;
	// emitMeasured emits a testcase that has some.
	props        []junit.Property
	emitMeasured func(*measuredCase)
	// par gathers the branches of a top-level parallel: step, a
	// testcase each (junit_branch.go).
	par *branchCases
	// branchKey, in the builder of a branch's testcase, is the branch's
	// path: its steps' entry.
	branchKey string
}

func newCaseBuilder(seq *seqSummary, opts results.Options, emit func(*junit.Testcase)) *caseBuilder {
	return &caseBuilder{seq: seq, opts: opts, emit: emit}
}

func (cb *caseBuilder) add(st *results.Step) {
	if cb.branchKey != "" {
		cb.addEntry(st, cb.branchKey)
		return
	}
	if bk, par, ok := topBranch(st.Path); ok {
		cb.addBranch(bk, par, st)
		return
	}
	if cb.par != nil {
		if st.Path == cb.par.key {
			cb.finishBranches(st)
			return
		}
		cb.finishBranches(nil)
	}
	cb.addEntry(st, results.TopKey(st.Path))
}

// addEntry adds st to the entry key, which st's own record ends.
func (cb *caseBuilder) addEntry(st *results.Step, key string) {
	if cb.key != "" && key != cb.key {
		cb.flush()
	}
	start, end := st.StartedMS.D(), st.StartedMS.D()+st.DurationMS.D()
	if cb.key == "" {
		cb.key = key
		c := *st
		c.Saved, c.Data, c.Repeat = nil, nil, nil
		cb.opened, cb.start, cb.end = &c, start, end
	}
	cb.start, cb.end = min(cb.start, start), max(cb.end, end)
	top := st.Path == key
	cb.measureProps(st)
	switch {
	case st.Kind == "repeat":
		cb.addRepeat(st)
	case st.Kind == "group" || st.Kind == "branch" || st.Kind == "parallel":
		// A group's failure is news only when none of its steps failed,
		// as when it timed out as a whole.
		if isProblem(st.Status) && !cb.errored && !cb.failed {
			cb.addProblem(st)
		}
	default:
		cb.addLeaf(st)
	}
	if top {
		cb.caseProps(st)
		cb.finish(st)
	}
}

func (cb *caseBuilder) addLeaf(st *results.Step) {
	cb.leaves++
	if st.Status == runner.Skipped {
		cb.skipped++
		if cb.first == nil {
			c := *st
			cb.first = &c
		}
	}
	if isProblem(st.Status) {
		cb.addProblem(st)
	}
	// Values the steps read (memory words and the like) go to the case's
	// output as "label: 0x... 0x...", as on the console.
	var lines []string
	if label, vals, ok := labelledValues(st.Data); ok {
		lines = append(lines, fmt.Sprintf("%s: %s", cleanLine(label), cleanLine(vals)))
	}
	if st.Kind == pioTestKind {
		cb.addTestCases(st)
	}
	// What a build or an upload reported: sizes, or the isolated cause.
	if (st.Kind == "build" || st.Kind == "upload" || st.Kind == pioTestKind) && st.Message != "" {
		lines = append(lines, fmt.Sprintf("%s: %s", st.Kind, cleanLine(st.Message)))
	}
	// Pictures, as the attachment lines that Jenkins and GitLab show
	// beside the test case.
	for i, l := range lines {
		lines[i] = noAttachments(l)
	}
	for _, a := range st.Attachments {
		lines = append(lines, attachmentLine(a))
	}
	for _, l := range lines {
		if cb.valueLines >= valueLinesLimit {
			cb.moreValue++
			continue
		}
		cb.valueLines++
		cb.values.WriteString(l + "\n")
	}
}

// addRepeat lists a repeat's failing iterations, under the summary cap.
func (cb *caseBuilder) addRepeat(st *results.Step) {
	r := st.Repeat
	if r == nil || !isProblem(st.Status) {
		return
	}
	if len(r.Failures) == 0 {
		cb.addProblem(st)
		return
	}
	// The failure's message is that of the first failing step, which says
	// more than the repeat's status.
	if f := r.Failures[0]; len(f.Detail) > 0 && st.Message == "" {
		cb.note(&results.Step{StepBase: f.Detail[0]})
	} else {
		cb.note(st)
	}
	if !cb.reserve() {
		return
	}
	fmt.Fprintf(&cb.body, "step %s repeat", cleanLine(st.Path))
	if st.Name != "" {
		fmt.Fprintf(&cb.body, " %s", cleanLine(st.Name))
	}
	fmt.Fprintf(&cb.body, ": %d of %d iterations did not pass (%d failed, %d errors); iteration time min %s, median %s, p99 %s, max %s\n",
		r.Iterations-r.Passed, r.Iterations, r.Failed, r.Errored,
		fmtMS(r.MinMS), fmtMS(r.MedianMS), fmtMS(r.P99MS), fmtMS(r.MaxMS))
	for _, it := range r.Failures {
		if len(it.Detail) == 0 {
			fmt.Fprintf(&cb.body, "iteration %d: %s\n", it.Index, reportStatus(it.Status))
			continue
		}
		fmt.Fprintf(&cb.body, "iteration %d: ", it.Index)
		cb.writeProblem(&results.Step{StepBase: it.Detail[0]})
		if n := len(it.Detail) - 1 + it.More; n > 0 {
			fmt.Fprintf(&cb.body, "(and %d more steps of iteration %d did not pass)\n", n, it.Index)
		}
	}
	if r.MoreFailures > 0 {
		fmt.Fprintf(&cb.body, "… and %d more failing iterations: the event stream lists every one\n", r.MoreFailures)
	}
}

func fmtMS(m results.Millis) string {
	return strconv.FormatFloat(float64(m.D())/float64(time.Millisecond), 'f', 3, 64) + "ms"
}

// note records st as a problem of the case.
func (cb *caseBuilder) note(st *results.Step) {
	switch {
	case isErrorLike(st.Status):
		if !cb.errored {
			c := *st
			cb.first = &c
		}
		cb.errored = true
	case st.Status == runner.Failed:
		if !cb.errored && !cb.failed {
			c := *st
			cb.first = &c
		}
		cb.failed = true
	}
}

// reserve makes room for one more problem in the body, false past the cap.
func (cb *caseBuilder) reserve() bool {
	if cb.problems >= cb.opts.FailureCap() {
		cb.more++
		return false
	}
	if cb.problems > 0 {
		cb.body.WriteByte('\n')
	}
	cb.problems++
	return true
}

func (cb *caseBuilder) addProblem(st *results.Step) {
	cb.note(st)
	if cb.reserve() {
		cb.writeProblem(st)
	}
}

// writeProblem describes a step that did not pass, for a failure's body.
func (cb *caseBuilder) writeProblem(s *results.Step) {
	b := &cb.body
	fmt.Fprintf(b, "step %s %s", cleanLine(s.Path), cleanLine(s.Kind))
	if s.Name != "" {
		fmt.Fprintf(b, " %s", cleanLine(s.Name))
	}
	fmt.Fprintf(b, ": %s\n", problemMessage(s))
	if loc := location(s, cb.seq.seq.File); loc != "" {
		fmt.Fprintf(b, "at %s\n", loc)
	}
	if sent, ok := sentText(s.Data); ok {
		fmt.Fprintf(b, "sent: %s\n", sent)
	}
	if s.Expected != "" {
		fmt.Fprintf(b, "expected: %s\n", cleanLine(s.Expected))
	}
	if s.Received != "" {
		b.WriteString("received:\n")
		for _, l := range strings.Split(strings.TrimSuffix(cleanText(s.Received), "\n"), "\n") {
			fmt.Fprintf(b, "  %s\n", l)
		}
	}
}

// flush emits the testcase of an entry whose own step never came, as for a
// sequence cut short; the entry is named after its first step.
func (cb *caseBuilder) flush() {
	if cb.par != nil {
		cb.finishBranches(nil)
	}
	if cb.key == "" {
		return
	}
	top := *cb.opened
	top.Path, top.StartedMS, top.DurationMS = cb.key, results.MS(cb.start), results.MS(cb.end-cb.start)
	if g, _, _ := strings.Cut(top.Group, groupSeparator); g != "" {
		top.Kind, top.Group = "group", g
	}
	cb.finish(&top)
}

// finish emits the testcase of the entry that ends with top, and starts
// the next.
func (cb *caseBuilder) finish(top *results.Step) {
	name := stepCaseName(top, cb.seq)
	if top.Kind == "group" {
		switch {
		case top.Group != "":
			name = entryIndex(cb.key, cb.seq) + " " + cleanLine(top.Group)
		case top.Name != "":
			name = entryIndex(cb.key, cb.seq) + " " + cleanLine(top.Name)
		}
	}
	tc := junit.Testcase{Name: name, Classname: cleanLine(cb.seq.seq.Name), Time: seconds(top.DurationMS.D())}
	if cb.values.Len() > 0 || cb.moreValue > 0 {
		out := cb.values.String()
		if cb.moreValue > 0 {
			out += fmt.Sprintf("… and %d more lines\n", cb.moreValue)
		}
		tc.SystemOut = &junit.Output{Data: out}
	}
	if top.Status == runner.Skipped && cb.leaves == 0 {
		cb.leaves, cb.skipped = 1, 1
		c := *top
		cb.first = &c
	}
	switch {
	case cb.errored || cb.failed:
		res, _ := cb.problemResult()
		if cb.errored {
			tc.Error = res
		} else {
			tc.Failure = res
		}
		cb.problem = true
	case cb.leaves > 0 && cb.skipped == cb.leaves:
		msg := "skipped"
		if cb.first != nil && cb.first.Message != "" {
			msg = cleanLine(cb.first.Message)
		}
		tc.Skipped = &junit.Result{Message: msg}
		if cb.cases == 0 {
			cb.firstSkipped = true
			if cb.carry != nil {
				tc.Skipped, tc.Error, tc.Failure = nil, cb.carry.Error, cb.carry.Failure
			}
		}
	}
	// An entry that is one pio_test step that ran its tests is its test
	// cases; else they follow the entry's testcase.
	if !(cb.pioOnly && cb.leaves == 1 && len(cb.pioCases) > 0 && top.Kind == pioTestKind) {
		cb.emitCase(&tc)
	}
	for _, c := range cb.pioCases {
		cb.emit(c)
	}
	if cb.moreCases > 0 {
		name := fmt.Sprintf("%s … and %d more test cases", entryIndex(cb.key, cb.seq), cb.moreCases)
		cb.emit(&junit.Testcase{Name: name, Classname: cleanLine(cb.seq.seq.Name), Time: seconds(0),
			SystemOut: &junit.Output{Data: "the event stream lists every test case\n"}})
	}
	*cb = caseBuilder{seq: cb.seq, opts: cb.opts, emit: cb.emit, emitMeasured: cb.emitMeasured, problem: cb.problem,
		cases: cb.cases + 1, firstSkipped: cb.firstSkipped, carry: cb.carry, branchKey: cb.branchKey}
}

// sequenceCase is the testcase standing for a sequence that did not pass
// although none of its steps failed, or nil.
func sequenceCase(s *seqSummary, problem bool) *junit.Testcase {
	seq := &s.seq
	if problem || (seq.Error == "" && !isProblem(seq.Status)) || seq.Status == runner.Interrupted {
		// An interrupted sequence has its interruption's testcase.
		return nil
	}
	name := "sequence"
	if !s.steps {
		name = "setup"
	}
	msg := seq.Error
	if msg == "" {
		msg = "sequence " + reportStatus(seq.Status)
	}
	res := &junit.Result{Message: cleanLine(msg), Data: cleanText(msg) + "\n"}
	if seq.File != "" {
		res.Data += "at " + cleanLine(seq.File) + "\n"
	}
	tc := &junit.Testcase{Name: name, Classname: cleanLine(seq.Name), Time: seconds(0)}
	if seq.Status == runner.Failed {
		res.Type = typeFailed
		tc.Failure = res
	} else {
		res.Type = typeError
		tc.Error = res
	}
	return tc
}

func problemMessage(s *results.Step) string {
	if s.Message != "" {
		return cleanLine(s.Message)
	}
	return fmt.Sprintf("step %s %s", cleanLine(s.Path), reportStatus(s.Status))
}

// stepCaseName names the testcase of a step outside any named group: its path,
// with the top-level index zero-padded so that names sort in run order, its
// kind and its name, as in "03 send help" or "finally.0 send off".
func stepCaseName(s *results.Step, seq *seqSummary) string {
	name := cleanLine(padPath(s.Path, seq)) + " " + cleanLine(s.Kind)
	if s.Name != "" {
		name += " " + cleanLine(s.Name)
	}
	return name
}

func leadingDigits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

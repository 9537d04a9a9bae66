package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/hilrun/hilrun/pkg/runner"
)

// JUnitOptions configures WriteJUnit.
type JUnitOptions struct {
	// Hostname fills the hostname attribute of every testsuite; "" leaves
	// it out.
	Hostname string
	// Now stands in for a sequence's StartedAt when that is zero, as for a
	// sequence that never started; nil means time.Now.
	Now func() time.Time
}

// WriteJUnit writes results to w as a JUnit XML report, one testsuite per
// sequence file.
//
// The testcases of a suite are its named groups, one per distinct
// StepResult.Group in the order first seen, and the steps outside any named
// group, each on its own. Group and repeat steps are not testcases of their
// own, since the steps they contain are; one that failed while none of its
// steps did counts towards the group its steps are in. A testcase is an error
// when one of its steps errored or was interrupted, else a failure when one
// failed, else skipped when all its steps were; an interrupted run therefore
// reads as an error. A sequence that did not pass although none of its steps
// failed, such as one whose setup failed, gets an extra testcase named
// "setup" (no step ran) or "sequence" carrying its Error.
//
// The consoles' transcripts go to the testsuite's system-out. Every text that
// came from a device or the user is escaped so the file is well-formed XML
// 1.0 whatever bytes it held.
func WriteJUnit(w io.Writer, results []runner.SequenceResult, opts JUnitOptions) error {
	suites := junit.Testsuites{Name: "hilrun"}
	var total time.Duration
	for i := range results {
		suites.AddSuite(junitSuite(i, &results[i], opts))
		total += results[i].Duration
	}
	suites.Time = seconds(total)
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("write junit report: %w", err)
	}
	if err := suites.WriteXML(w); err != nil {
		return fmt.Errorf("write junit report: %w", err)
	}
	return nil
}

func junitSuite(id int, seq *runner.SequenceResult, opts JUnitOptions) junit.Testsuite {
	suite := junit.Testsuite{
		Name:     cleanLine(seq.Name),
		ID:       id,
		Hostname: cleanLine(opts.Hostname),
		File:     cleanLine(seq.File),
		Time:     seconds(seq.Duration),
	}
	started := seq.StartedAt
	if started.IsZero() {
		if opts.Now != nil {
			started = opts.Now()
		} else {
			started = time.Now()
		}
	}
	suite.SetTimestamp(started)
	suite.AddProperty("file", cleanLine(seq.File))

	problem := false
	for _, tc := range junitCases(seq) {
		problem = problem || tc.Failure != nil || tc.Error != nil
		suite.AddTestcase(tc)
	}

	switch {
	case !problem && (seq.Error != "" || isProblem(seq.Status)):
		// Nothing above tells CI that this sequence did not pass.
		suite.AddTestcase(sequenceCase(seq))
	case seq.Error != "":
		suite.SystemErr = &junit.Output{Data: cleanText(seq.Error) + "\n"}
	}

	if out := transcripts(seq.Transcripts); out != "" {
		suite.SystemOut = &junit.Output{Data: out}
	}
	return suite
}

// caseSteps is one testcase under construction: a named group or a lone step.
type caseSteps struct {
	name  string
	steps []*runner.StepResult
}

// junitCases groups the steps of seq into testcases, as WriteJUnit describes.
func junitCases(seq *runner.SequenceResult) []junit.Testcase {
	width := pathWidth(seq.Steps)
	var order []*caseSteps
	groups := make(map[string]*caseSteps)
	add := func(group string, s *runner.StepResult) {
		if group == "" {
			order = append(order, &caseSteps{name: stepCaseName(s, width), steps: []*runner.StepResult{s}})
			return
		}
		cs, ok := groups[group]
		if !ok {
			cs = &caseSteps{name: cleanLine(group)}
			groups[group] = cs
			order = append(order, cs)
		}
		cs.steps = append(cs.steps, s)
	}

	for i := range seq.Steps {
		s := &seq.Steps[i]
		if !isContainer(s) {
			add(s.Group, s)
			continue
		}
		if !isProblem(s.Status) {
			continue
		}
		// A container reports after its steps. Its failure is news only when
		// none of them failed, as when a group timed out as a whole; it
		// belongs with the steps it contains, which carry the group it names.
		group, inner, innerProblem := s.Group, false, false
		for j := range seq.Steps {
			t := &seq.Steps[j]
			if !containsPath(s.Path, t.Path) {
				continue
			}
			if !inner {
				group, inner = t.Group, true
			}
			innerProblem = innerProblem || isProblem(t.Status)
		}
		if !innerProblem {
			add(group, s)
		}
	}

	cases := make([]junit.Testcase, 0, len(order))
	for _, cs := range order {
		cases = append(cases, junitCase(seq, cs))
	}
	return cases
}

func junitCase(seq *runner.SequenceResult, cs *caseSteps) junit.Testcase {
	tc := junit.Testcase{
		Name:      cs.name,
		Classname: cleanLine(seq.Name),
		Time:      seconds(span(cs.steps)),
	}
	var first *runner.StepResult
	errored, failed, skipped := false, false, 0
	var body strings.Builder
	for _, s := range cs.steps {
		switch {
		case isErrorLike(s.Status):
			if !errored {
				first = s
			}
			errored = true
		case s.Status == runner.Failed:
			if !errored && !failed {
				first = s
			}
			failed = true
		case s.Status == runner.Skipped:
			skipped++
		}
		if isProblem(s.Status) {
			if body.Len() > 0 {
				body.WriteByte('\n')
			}
			writeProblem(&body, seq, s)
		}
	}
	// Values the steps read (memory words and the like) go to the case's
	// output as "label: 0x... 0x...", as on the console.
	var values strings.Builder
	for _, s := range cs.steps {
		if label, vals, ok := labelledValues(s.Data); ok {
			fmt.Fprintf(&values, "%s: %s\n", cleanLine(label), vals)
		}
		// What a build or an upload reported: sizes, or the isolated cause.
		if (s.Kind == "build" || s.Kind == "upload") && s.Message != "" {
			fmt.Fprintf(&values, "%s: %s\n", s.Kind, cleanLine(s.Message))
		}
		// Pictures, as the attachment lines that Jenkins and GitLab show
		// beside the test case.
		for _, a := range s.Attachments {
			fmt.Fprintf(&values, "[[ATTACHMENT|%s]]\n", cleanLine(a))
		}
	}
	if values.Len() > 0 {
		tc.SystemOut = &junit.Output{Data: values.String()}
	}
	switch {
	case errored || failed:
		res := &junit.Result{Message: problemMessage(first), Data: body.String()}
		if first.Status == runner.Interrupted {
			res.Type = string(runner.Interrupted)
		}
		if errored {
			tc.Error = res
		} else {
			tc.Failure = res
		}
	case skipped == len(cs.steps):
		msg := "skipped"
		if cs.steps[0].Message != "" {
			msg = cleanLine(cs.steps[0].Message)
		}
		tc.Skipped = &junit.Result{Message: msg}
	}
	return tc
}

// sequenceCase is the testcase standing for a sequence that did not pass
// although none of its steps failed.
func sequenceCase(seq *runner.SequenceResult) junit.Testcase {
	name := "sequence"
	if len(seq.Steps) == 0 {
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
	tc := junit.Testcase{Name: name, Classname: cleanLine(seq.Name), Time: seconds(0)}
	switch seq.Status {
	case runner.Failed:
		tc.Failure = res
	case runner.Interrupted:
		res.Type = string(runner.Interrupted)
		tc.Error = res
	default:
		tc.Error = res
	}
	return tc
}

// writeProblem describes a step that did not pass, for a failure's body.
func writeProblem(b *strings.Builder, seq *runner.SequenceResult, s *runner.StepResult) {
	fmt.Fprintf(b, "step %s %s", cleanLine(s.Path), cleanLine(s.Kind))
	if s.Name != "" {
		fmt.Fprintf(b, " %s", cleanLine(s.Name))
	}
	fmt.Fprintf(b, ": %s\n", problemMessage(s))
	if loc := location(s, seq.File); loc != "" {
		fmt.Fprintf(b, "at %s\n", loc)
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

func problemMessage(s *runner.StepResult) string {
	if s.Message != "" {
		return cleanLine(s.Message)
	}
	return fmt.Sprintf("step %s %s", cleanLine(s.Path), reportStatus(s.Status))
}

// stepCaseName names the testcase of a step outside any named group: its path,
// with the top-level index zero-padded so that names sort in run order, its
// kind and its name, as in "03 send help".
func stepCaseName(s *runner.StepResult, width int) string {
	path := s.Path
	n := leadingDigits(path)
	if n > 0 && n < width {
		path = strings.Repeat("0", width-n) + path
	}
	name := cleanLine(path) + " " + cleanLine(s.Kind)
	if s.Name != "" {
		name += " " + cleanLine(s.Name)
	}
	return name
}

// pathWidth is how many digits the largest top-level step index has, at
// least two.
func pathWidth(steps []runner.StepResult) int {
	width := 2
	for i := range steps {
		width = max(width, leadingDigits(steps[i].Path))
	}
	return width
}

func leadingDigits(s string) int {
	n := 0
	for n < len(s) && s[n] >= '0' && s[n] <= '9' {
		n++
	}
	return n
}

// span is the time from the start of the first of steps to the end of the
// last.
func span(steps []*runner.StepResult) time.Duration {
	if len(steps) == 0 {
		return 0
	}
	start, end := steps[0].Started, steps[0].Started+steps[0].Duration
	for _, s := range steps[1:] {
		start = min(start, s.Started)
		end = max(end, s.Started+s.Duration)
	}
	return end - start
}

// transcripts formats what the consoles printed for a testsuite's system-out.
func transcripts(ts []runner.Transcript) string {
	var b strings.Builder
	for _, t := range ts {
		b.WriteString("== console " + cleanLine(t.Console))
		if t.Truncated > 0 {
			b.WriteString(" (first " + strconv.FormatInt(t.Truncated, 10) + " bytes dropped)")
		}
		b.WriteString(" ==\n")
		text := cleanText(string(t.Data))
		b.WriteString(text)
		if text != "" && !strings.HasSuffix(text, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}

package report

import (
	"bufio"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/hilrun/hilrun/pkg/results"
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
	// Summary bounds what a test case lists (package results).
	Summary results.Options
	// Shard, when not nil, says which shard of a run the report holds:
	// every testsuite gets the properties shard ("2/4"), shard_sequences
	// and shard_plan (Shard), so that MergeJUnit can tell when a shard
	// is missing.
	Shard *Shard
}

// valueLinesLimit bounds the lines of values a test case's system-out lists.
const valueLinesLimit = 100

// WriteJUnit writes the run recorded in the event file events to w as a
// JUnit XML report, one testsuite per sequence file.
//
// A testcase is a top-level entry of a sequence: a group, with every step
// inside it (nested groups and repeats included), or a step outside any
// group; never an iteration of a repeat. A testcase is an error when one of
// its steps errored or was interrupted, else a failure when one failed, else
// skipped when all its steps were; an interrupted run therefore reads as an
// error. Its failure lists the steps that did not pass, up to
// opts.Summary.MaxFailures; a repeat lists its failing iterations under the
// same cap, with its iteration statistics. Entries that did not run are
// testcases too, skipped, so the set of testcases does not depend on where
// a run stopped. A sequence that did not pass although none of its steps
// failed has its Error carried by its first testcase when that did not run
// (a device did not open), else by an extra testcase named "setup" (no
// step ran) or "sequence". An interrupted sequence's suite starts instead
// with a testcase named "(interrupted)" that says where the run stopped
// and which finally step went wrong after it, so the interrupt comes
// first and a finally step's failure never reads as its cause. Every
// testcase name starts with its entry's zero-padded index, so names sort
// in run order.
//
// The consoles' transcripts go to the testsuite's system-out. Every text
// that came from a device or the user is escaped so the file is well-formed
// XML 1.0 whatever bytes it held. The file is written as the event file is
// read (twice: once for the counts the testsuite elements carry), and
// go-junit-report only ever holds one bounded testcase, so memory stays
// bounded however many steps ran.
func WriteJUnit(w io.Writer, events string, opts JUnitOptions) error {
	if err := writeJUnit(w, events, opts); err != nil {
		return fmt.Errorf("write junit report: %w", err)
	}
	return nil
}

// suiteCounts are the counts of a testsuite's testcases.
type suiteCounts struct {
	tests, failures, errors, skipped int
	extra                            *junit.Testcase
}

func (c *suiteCounts) add(tc *junit.Testcase) {
	c.tests++
	switch {
	case tc.Error != nil:
		c.errors++
	case tc.Failure != nil:
		c.failures++
	case tc.Skipped != nil:
		c.skipped++
	}
}

func writeJUnit(w io.Writer, events string, opts JUnitOptions) error {
	// First pass: the sequences, and their testcases counted only.
	var seqs []seqSummary
	var counts []suiteCounts
	var stops []interruption
	var cb *caseBuilder
	z := &results.Summarizer{
		Options: opts.Summary,
		OnStart: func(i int, _ *results.Sequence) {
			seqs = append(seqs, seqSummary{width: 2, finallyWidth: 1})
			counts = append(counts, suiteCounts{})
			stops = append(stops, interruption{})
			n := len(seqs) - 1
			cb = newCaseBuilder(&seqs[n], opts.Summary, func(tc *junit.Testcase) { counts[n].add(tc) })
		},
		OnStep: func(_ int, st *results.Step) {
			n := len(seqs) - 1
			s := &seqs[n]
			s.steps = true
			if rest, ok := strings.CutPrefix(st.Path, finallyPrefix); ok {
				s.finallyWidth = max(s.finallyWidth, leadingDigits(rest))
			} else {
				s.width = max(s.width, leadingDigits(st.Path))
			}
			stops[n].observe(st)
			cb.add(st)
		},
		OnEnd: func(_ int, seq *results.Sequence, c results.Counts) {
			n := len(seqs) - 1
			seqs[n].seq, seqs[n].counts = *seq, c
			cb.flush()
			if tc := stops[n].testcase(&seqs[n]); tc != nil {
				counts[n].add(tc)
			} else if tc := sequenceCase(&seqs[n], cb.problem); tc != nil {
				if cb.firstSkipped {
					// Nothing ran, as when a device did not open: the
					// first case carries the error instead, so the case
					// set stays that of a full run.
					seqs[n].carry = true
					counts[n].skipped--
					counts[n].tests--
					counts[n].add(tc)
				} else {
					counts[n].add(tc)
					counts[n].extra = tc
				}
			}
		},
	}
	if err := results.Summarize(events, z); err != nil {
		return err
	}

	var all suiteCounts
	var total time.Duration
	for i := range seqs {
		all.tests += counts[i].tests
		all.failures += counts[i].failures
		all.errors += counts[i].errors
		all.skipped += counts[i].skipped
		total += seqs[i].seq.DurationMS.D()
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	if _, err := io.WriteString(bw, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(bw)
	enc.Indent("", "\t")
	root := xml.StartElement{Name: xml.Name{Local: "testsuites"}}
	root.Attr = appendAttrs(root.Attr, "name", "hilrun", "time", seconds(total))
	// junit-10 has no skipped count on <testsuites>: the suites carry it.
	root.Attr = appendCounts(root.Attr, true, "tests", all.tests, "errors", all.errors, "failures", all.failures)
	if err := enc.EncodeToken(root); err != nil {
		return err
	}

	// Second pass: the document.
	var encErr error
	// Every value is stripped of attachment markers on its way out (but
	// the lines the case builder made for pictures, see safeCase).
	encode := func(v any, name string) {
		switch x := v.(type) {
		case *junit.Testcase:
			safeCase(x)
		case junit.Property:
			x.Name, x.Value = noAttachments(x.Name), noAttachments(x.Value)
			v = x
		case junit.Output:
			x.Data = noAttachments(x.Data)
			v = x
		}
		if encErr == nil {
			encErr = enc.EncodeElement(v, xml.StartElement{Name: xml.Name{Local: name}})
		}
	}
	token := func(t xml.Token) {
		if st, ok := t.(xml.StartElement); ok {
			safeAttrs(st.Attr)
		}
		if encErr == nil {
			encErr = enc.EncodeToken(t)
		}
	}
	z = &results.Summarizer{
		Options: opts.Summary,
		OnStart: func(i int, _ *results.Sequence) {
			s := &seqs[i]
			c := &counts[i]
			started := s.seq.StartedAt
			if started.IsZero() {
				started = opts.now()
			}
			suite := xml.StartElement{Name: xml.Name{Local: "testsuite"}}
			suite.Attr = appendAttrs(suite.Attr, "name", cleanLine(s.seq.Name))
			suite.Attr = appendCounts(suite.Attr, false, "tests", c.tests, "failures", c.failures, "errors", c.errors, "id", i)
			if h := cleanLine(opts.Hostname); h != "" {
				suite.Attr = appendAttrs(suite.Attr, "hostname", h)
			}
			suite.Attr = appendCounts(suite.Attr, true, "skipped", c.skipped)
			suite.Attr = appendAttrs(suite.Attr, "time", seconds(s.seq.DurationMS.D()), "timestamp", started.Format(time.RFC3339))
			if f := cleanLine(s.seq.File); f != "" {
				suite.Attr = appendAttrs(suite.Attr, "file", f)
			}
			token(suite)
			// The sequence file is the suite's file attribute only.
			var props []junit.Property
			if sh := opts.Shard; sh != nil {
				props = append(props, sh.properties()...)
			}
			if b := cleanLine(s.seq.Bench); b != "" {
				props = append(props, junit.Property{Name: "bench", Value: b})
			}
			if len(props) > 0 {
				token(xml.StartElement{Name: xml.Name{Local: "properties"}})
				for _, p := range props {
					encode(p, "property")
				}
				token(xml.EndElement{Name: xml.Name{Local: "properties"}})
			}
			// After an interrupt, the interrupt is the suite's first
			// testcase.
			if tc := stops[i].testcase(s); tc != nil {
				encode(tc, "testcase")
			}
			cb = newCaseBuilder(s, opts.Summary, func(tc *junit.Testcase) { encode(tc, "testcase") })
			if s.carry {
				cb.carry = sequenceCase(s, false)
			}
		},
		OnStep: func(_ int, st *results.Step) { cb.add(st) },
		OnEnd: func(i int, _ *results.Sequence, _ results.Counts) {
			cb.flush()
			s := &seqs[i]
			extra := counts[i].extra
			if extra != nil {
				encode(extra, "testcase")
			}
			if out := transcripts(s.seq.Transcripts); out != "" {
				encode(junit.Output{Data: out}, "system-out")
			}
			if extra == nil && !s.carry && s.seq.Error != "" && s.seq.Status != runner.Interrupted {
				encode(junit.Output{Data: cleanText(s.seq.Error) + "\n"}, "system-err")
			}
			token(xml.EndElement{Name: xml.Name{Local: "testsuite"}})
		},
	}
	if err := results.Summarize(events, z); err != nil {
		return err
	}
	token(xml.EndElement{Name: root.Name})
	if encErr != nil {
		return encErr
	}
	if err := enc.Flush(); err != nil {
		return err
	}
	if _, err := io.WriteString(bw, "\n"); err != nil {
		return err
	}
	return bw.Flush()
}

func (o JUnitOptions) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

func appendAttrs(attrs []xml.Attr, kv ...string) []xml.Attr {
	for i := 0; i+1 < len(kv); i += 2 {
		attrs = append(attrs, xml.Attr{Name: xml.Name{Local: kv[i]}, Value: kv[i+1]})
	}
	return attrs
}

// appendCounts appends name, number pairs; with omitZero, zeros are left
// out.
func appendCounts(attrs []xml.Attr, omitZero bool, kv ...any) []xml.Attr {
	for i := 0; i+1 < len(kv); i += 2 {
		n := kv[i+1].(int)
		if omitZero && n == 0 {
			continue
		}
		attrs = append(attrs, xml.Attr{Name: xml.Name{Local: kv[i].(string)}, Value: strconv.Itoa(n)})
	}
	return attrs
}

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
}

// pioTestKind is the kind of a pio_test step (steps.KindPIOTest).
const pioTestKind = "pio_test"

// maxTestCases bounds the pio_test cases one entry reports; the rest are
// counted in a last testcase's output.
const maxTestCases = 10000

func newCaseBuilder(seq *seqSummary, opts results.Options, emit func(*junit.Testcase)) *caseBuilder {
	return &caseBuilder{seq: seq, opts: opts, emit: emit}
}

func (cb *caseBuilder) add(st *results.Step) {
	key := results.TopKey(st.Path)
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
	switch {
	case st.Kind == "repeat":
		cb.addRepeat(st)
	case st.Kind == "group":
		// A group's failure is news only when none of its steps failed,
		// as when it timed out as a whole.
		if isProblem(st.Status) && !cb.errored && !cb.failed {
			cb.addProblem(st)
		}
	default:
		cb.addLeaf(st)
	}
	if top {
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

// addTestCases turns the cases of a pio_test step (its data's "cases")
// into testcases named after the step, the suite and the case.
func (cb *caseBuilder) addTestCases(st *results.Step) {
	list, _ := st.Data["cases"].([]any)
	if len(list) == 0 {
		return
	}
	cb.pioOnly = st.Path == results.TopKey(st.Path)
	prefix := stepCaseName(st, cb.seq)
	if st.Group != "" {
		prefix = entryIndex(results.TopKey(st.Path), cb.seq) + " " + cleanLine(st.Group) + " " + prefix
	}
	width := len(strconv.Itoa(len(list)))
	for k, x := range list {
		m, _ := x.(map[string]any)
		if m == nil {
			continue
		}
		if len(cb.pioCases) >= maxTestCases {
			cb.moreCases++
			continue
		}
		str := func(k string) string { v, _ := m[k].(string); return cleanLine(v) }
		ms, line := num(m["duration_ms"]), num(m["line"])
		name := fmt.Sprintf("%s: %0*d %s/%s", prefix, width, k+1, str("suite"), str("name"))
		tc := &junit.Testcase{Name: name, Classname: cleanLine(cb.seq.seq.Name),
			Time: seconds(time.Duration(ms * float64(time.Millisecond)))}
		msg := str("message")
		where := str("file")
		if where != "" {
			where = fmt.Sprintf("%s:%d", where, int(line))
		}
		switch str("status") {
		case "FAILED":
			tc.Failure = &junit.Result{Message: first(msg, "failed"), Type: typeFailed, Data: strings.TrimSpace(where+": "+msg) + "\n"}
		case "ERRORED":
			tc.Error = &junit.Result{Message: first(msg, "errored"), Type: typeError, Data: strings.TrimSpace(where+": "+msg) + "\n"}
		case "SKIPPED":
			tc.Skipped = &junit.Result{Message: first(msg, "skipped")}
		}
		cb.pioCases = append(cb.pioCases, tc)
	}
}

// num is a number of a step's data, however the event file decoded it.
func num(v any) float64 {
	switch x := v.(type) {
	case float64:
		return x
	case int:
		return float64(x)
	case int64:
		return float64(x)
	case json.Number:
		f, _ := x.Float64()
		return f
	}
	return 0
}

func first(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
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
		cb.emit(&tc)
	}
	for _, c := range cb.pioCases {
		cb.emit(c)
	}
	if cb.moreCases > 0 {
		name := fmt.Sprintf("%s … and %d more test cases", entryIndex(cb.key, cb.seq), cb.moreCases)
		cb.emit(&junit.Testcase{Name: name, Classname: cleanLine(cb.seq.seq.Name), Time: seconds(0),
			SystemOut: &junit.Output{Data: "the event stream lists every test case\n"}})
	}
	*cb = caseBuilder{seq: cb.seq, opts: cb.opts, emit: cb.emit, problem: cb.problem,
		cases: cb.cases + 1, firstSkipped: cb.firstSkipped, carry: cb.carry}
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

// transcripts formats what the consoles printed for a testsuite's system-out.
func transcripts(ts []results.Transcript) string {
	var b strings.Builder
	for _, t := range ts {
		b.WriteString("== " + consoleLabel(t.Console))
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

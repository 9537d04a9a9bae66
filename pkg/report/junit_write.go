package report

import (
	"bufio"
	"encoding/xml"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// write is the second pass: the document, to w.
func (jw *junitWriter) write(w io.Writer) error {
	var all suiteCounts
	var total time.Duration
	for i := range jw.seqs {
		all.tests += jw.counts[i].tests
		all.failures += jw.counts[i].failures
		all.errors += jw.counts[i].errors
		all.skipped += jw.counts[i].skipped
		total += jw.seqs[i].seq.DurationMS.D()
	}
	jw.benchCounts(&all)
	bw := bufio.NewWriterSize(w, 64<<10)
	if _, err := io.WriteString(bw, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(bw)
	enc.Indent("", "\t")
	jw.enc = enc
	root := xml.StartElement{Name: xml.Name{Local: "testsuites"}}
	root.Attr = appendAttrs(root.Attr, "name", "hilrun", "time", seconds(total))
	// junit-10 has no skipped count on <testsuites>: the suites carry it.
	root.Attr = appendCounts(root.Attr, true, "tests", all.tests, "errors", all.errors, "failures", all.failures)
	if err := enc.EncodeToken(root); err != nil {
		return err
	}

	z := &results.Summarizer{
		Options: jw.opts.Summary,
		OnStart: func(i int, _ *results.Sequence) { jw.startSuite(i) },
		OnStep: func(_ int, st *results.Step) {
			if !jw.retries.diverted(st) {
				jw.cb.add(st)
			}
		},
		OnEnd:     func(i int, _ *results.Sequence, _ results.Counts) { jw.endSuite(i) },
		OnAttempt: func(_ int, a *results.Attempt) { jw.onAttempt(a) },
	}
	if err := results.Summarize(jw.events, z); err != nil {
		return err
	}
	jw.writeBenchSuites()
	jw.token(xml.EndElement{Name: root.Name})
	if jw.encErr != nil {
		return jw.encErr
	}
	if err := enc.Flush(); err != nil {
		return err
	}
	if _, err := io.WriteString(bw, "\n"); err != nil {
		return err
	}
	return bw.Flush()
}

// encode writes v as an element called name. Every value is stripped of
// attachment markers on its way out (but the lines the case builder made
// for pictures, see safeCase).
func (jw *junitWriter) encode(v any, name string) {
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
	if jw.encErr == nil {
		jw.encErr = jw.enc.EncodeElement(v, xml.StartElement{Name: xml.Name{Local: name}})
	}
}

// token writes t, its attributes stripped of attachment markers.
func (jw *junitWriter) token(t xml.Token) {
	if st, ok := t.(xml.StartElement); ok {
		safeAttrs(st.Attr)
	}
	if jw.encErr == nil {
		jw.encErr = jw.enc.EncodeToken(t)
	}
}

// startSuite opens the testsuite of sequence i: its element, its
// properties and, after an interrupt, the interrupt's testcase.
func (jw *junitWriter) startSuite(i int) {
	s := &jw.seqs[i]
	jw.token(jw.suiteElement(i))
	// The sequence file is the suite's file attribute only.
	var props []junit.Property
	if sh := jw.opts.Shard; sh != nil {
		props = append(props, sh.properties()...)
	}
	if b := cleanLine(s.seq.Bench); b != "" {
		props = append(props, junit.Property{Name: "bench", Value: b})
	}
	if len(props) > 0 {
		jw.token(xml.StartElement{Name: xml.Name{Local: "properties"}})
		for _, p := range props {
			jw.encode(p, "property")
		}
		jw.token(xml.EndElement{Name: xml.Name{Local: "properties"}})
	}
	// After an interrupt, the interrupt is the suite's first
	// testcase.
	if tc := jw.stops[i].testcase(s); tc != nil {
		jw.encode(tc, "testcase")
	}
	jw.cb = newCaseBuilder(s, jw.opts.Summary, func(tc *junit.Testcase) { jw.encodeCase(tc, jw.cb.earlier) })
	jw.retries = newSeqRetries(s, jw.attempts[i], jw.opts.Summary)
	jw.cb.emitMeasured = func(tc *measuredCase) { jw.encodeMeasured(tc, jw.cb.earlier) }
	if s.carry {
		jw.cb.carry = sequenceCase(s, false)
	}
}

// suiteElement is the testsuite element of sequence i, with its counts
// from the first pass.
func (jw *junitWriter) suiteElement(i int) xml.StartElement {
	s := &jw.seqs[i]
	c := &jw.counts[i]
	started := s.seq.StartedAt
	if started.IsZero() {
		started = jw.opts.now()
	}
	suite := xml.StartElement{Name: xml.Name{Local: "testsuite"}}
	suite.Attr = appendAttrs(suite.Attr, "name", cleanLine(s.seq.Name))
	suite.Attr = appendCounts(suite.Attr, false, "tests", c.tests, "failures", c.failures, "errors", c.errors, "id", i)
	if h := cleanLine(jw.opts.Hostname); h != "" {
		suite.Attr = appendAttrs(suite.Attr, "hostname", h)
	}
	suite.Attr = appendCounts(suite.Attr, true, "skipped", c.skipped)
	suite.Attr = appendAttrs(suite.Attr, "time", seconds(s.seq.DurationMS.D()), "timestamp", started.Format(time.RFC3339))
	if f := cleanLine(s.seq.File); f != "" {
		suite.Attr = appendAttrs(suite.Attr, "file", f)
	}
	return suite
}

// endSuite closes the testsuite of sequence i: its last testcases, the
// consoles' transcripts and the sequence's own error.
func (jw *junitWriter) endSuite(i int) {
	jw.cb.flush()
	s := &jw.seqs[i]
	extra := jw.counts[i].extra
	if extra != nil {
		jw.encode(extra, "testcase")
	}
	if out := transcripts(s.seq.Transcripts); out != "" {
		jw.encode(junit.Output{Data: out}, "system-out")
	}
	if extra == nil && !s.carry && s.seq.Error != "" && s.seq.Status != runner.Interrupted {
		jw.encode(junit.Output{Data: cleanText(s.seq.Error) + "\n"}, "system-err")
	}
	jw.token(xml.EndElement{Name: xml.Name{Local: "testsuite"}})
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

package report

import (
	"encoding/xml"
	"fmt"
	"strings"
	"time"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/hilrun/hilrun/pkg/results"
)

// recoveryProperty marks the testsuite of a bench's recoveries, and names
// the bench: it is no sequence's, and a merge of shards keeps it apart.
const recoveryProperty = "recovery_bench"

// benchSuite is what the JUnit report says of one bench whose recovery
// ladder climbed: a testsuite "bench NAME: recovery" after the sequences'
// suites, one testcase per climb. A climb that brought the bench back
// passes; one that did not is skipped, its message saying why the bench
// is bad, so that a bad bench whose queue the others finished does not
// fail the build (the run's exit code does not count it either); one an
// interrupt ended is an error, as the run's exit code (130) is. The
// suite's properties name the bench and, when it is bad, why.
type benchSuite struct {
	name  string
	cases []junit.Testcase
	bad   string
	time  time.Duration
	start time.Time
}

// benchSuites groups the run's climbs by bench.
func benchSuites(b *results.Benches) []benchSuite {
	names, byBench, bad := b.ByBench()
	out := make([]benchSuite, 0, len(names))
	for _, n := range names {
		s := benchSuite{name: n, bad: bad[n]}
		for i, r := range byBench[n] {
			if i == 0 {
				s.start = r.StartedAt
			}
			s.time += r.DurationMS.D()
			s.cases = append(s.cases, recoveryCase(i, &r))
		}
		if len(s.cases) == 0 {
			// Marked bad without a climb recorded: a case says so.
			s.cases = append(s.cases, junit.Testcase{Name: "00 bad bench", Classname: "bench " + cleanLine(n),
				Skipped: &junit.Result{Message: "bench " + cleanLine(n) + " is bad: " + cleanLine(s.bad)}})
		}
		out = append(out, s)
	}
	return out
}

// recoveryCase is the testcase of the i-th climb of a bench.
func recoveryCase(i int, r *results.Recovery) junit.Testcase {
	where := "before"
	if r.Trigger == results.TriggerError {
		where = "after"
	}
	tc := junit.Testcase{
		Name:      fmt.Sprintf("%02d recovery %s %s", i+1, where, cleanLine(r.Sequence)),
		Classname: "bench " + cleanLine(r.Bench),
		Time:      seconds(r.DurationMS.D()),
		// safeCase leaves system-out to its makers: this one is defused here.
		SystemOut: &junit.Output{Data: noAttachments(recoveryText(r))},
	}
	switch {
	case r.Interrupted:
		// The run stopped between sequences: an error, as an
		// interrupted sequence's (interrupted) testcase is.
		tc.Error = &junit.Result{Message: "interrupted: " + cleanLine(r.Outcome()), Type: "interrupted"}
	case !r.Recovered:
		tc.Skipped = &junit.Result{Message: cleanLine(r.Outcome()) + "; bench " + cleanLine(r.Bench) + " is bad: it took no more work: " + cleanLine(r.BadReason())}
	}
	return tc
}

// recoveryText is a climb as lines: why, each rung with the health check
// after it, the outcome.
func recoveryText(r *results.Recovery) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n", cleanLine(r.Why()))
	if r.Check != nil && r.Trigger == results.TriggerError {
		fmt.Fprintf(&b, "health check: %s", r.Check.Status)
		if r.Check.Message != "" {
			fmt.Fprintf(&b, ": %s", cleanLine(r.Check.Message))
		}
		b.WriteByte('\n')
	}
	for _, g := range r.Rungs {
		fmt.Fprintf(&b, "rung %d (%s) at %s: %s", g.Index, cleanLine(g.Label), locationOf(g.File, g.Line, g.Column, ""), g.Status)
		if g.Message != "" {
			fmt.Fprintf(&b, ": %s", cleanLine(g.Message))
		}
		fmt.Fprintf(&b, "; health check: %s", g.Health.Status)
		if g.Health.Message != "" {
			fmt.Fprintf(&b, ": %s", cleanLine(g.Health.Message))
		}
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "%s in %ss\n", cleanLine(r.Outcome()), seconds(r.DurationMS.D()))
	return b.String()
}

// counts are the suite's testcase counts.
func (s *benchSuite) counts() suiteCounts {
	var c suiteCounts
	for i := range s.cases {
		c.add(&s.cases[i])
	}
	return c
}

// writeBenchSuites writes the benches' suites, numbered after the
// sequences'.
func (jw *junitWriter) writeBenchSuites() {
	for k, s := range jw.benchSuites {
		c := s.counts()
		start := s.start
		if start.IsZero() {
			start = jw.opts.now()
		}
		suite := xml.StartElement{Name: xml.Name{Local: "testsuite"}}
		suite.Attr = appendAttrs(suite.Attr, "name", "bench "+cleanLine(s.name)+": recovery")
		suite.Attr = appendCounts(suite.Attr, false, "tests", c.tests, "failures", c.failures, "errors", c.errors, "id", len(jw.seqs)+k)
		if h := cleanLine(jw.opts.Hostname); h != "" {
			suite.Attr = appendAttrs(suite.Attr, "hostname", h)
		}
		suite.Attr = appendCounts(suite.Attr, true, "skipped", c.skipped)
		suite.Attr = appendAttrs(suite.Attr, "time", seconds(s.time), "timestamp", start.Format(time.RFC3339))
		jw.token(suite)
		props := []junit.Property{{Name: "bench", Value: cleanLine(s.name)}, {Name: recoveryProperty, Value: cleanLine(s.name)}}
		if s.bad != "" {
			props = append(props, junit.Property{Name: "bad", Value: cleanLine(s.bad)})
		}
		if sh := jw.opts.Shard; sh != nil {
			props = append(props, sh.properties()...)
		}
		jw.token(xml.StartElement{Name: xml.Name{Local: "properties"}})
		for _, p := range props {
			jw.encode(p, "property")
		}
		jw.token(xml.EndElement{Name: xml.Name{Local: "properties"}})
		for i := range s.cases {
			jw.encode(&s.cases[i], "testcase")
		}
		jw.token(xml.EndElement{Name: suite.Name})
	}
}

// benchCounts adds the benches' suites to the counts of the whole report.
func (jw *junitWriter) benchCounts(all *suiteCounts) {
	for i := range jw.benchSuites {
		c := jw.benchSuites[i].counts()
		all.tests += c.tests
		all.failures += c.failures
		all.errors += c.errors
		all.skipped += c.skipped
	}
}

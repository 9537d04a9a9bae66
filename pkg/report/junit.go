package report

import (
	"encoding/xml"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/hilrun/hilrun/pkg/results"
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
// group; never an iteration of a repeat. A parallel: step that is a
// top-level entry is one testcase per branch ("01 parallel [sender]"), in
// the order the branches are written. A testcase is an error when one of
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
// A bench whose recovery ladder climbed gets a testsuite after the
// sequences' ("bench NAME: recovery", see benchSuite): a testcase per
// climb, skipped when the bench did not come back.
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

// junitWriter writes one JUnit report in two passes over the event file:
// the first counts each sequence's testcases, which its testsuite element
// carries, the second writes the document.
type junitWriter struct {
	events string
	opts   JUnitOptions

	// seqs, counts and stops are each sequence's outcome, testcase
	// counts and interruption, from the first pass.
	seqs   []seqSummary
	counts []suiteCounts
	stops  []interruption
	// cb gathers the testcases of the sequence being read.
	cb *caseBuilder
	// attempts are each sequence's attempts, 0 without retries; retries
	// diverts the steps of the attempts of the sequence being read that
	// were retried.
	attempts []int
	retries  *seqRetries
	// benches are the climbs of the benches' ladders, from the first
	// pass; benchSuites their testsuites (junit_recover.go).
	benches     results.Benches
	benchSuites []benchSuite

	enc    *xml.Encoder
	encErr error // the first error encoding the document
}

func writeJUnit(w io.Writer, events string, opts JUnitOptions) error {
	jw := &junitWriter{events: events, opts: opts}
	if err := jw.finals(); err != nil {
		return err
	}
	if err := jw.count(); err != nil {
		return err
	}
	return jw.write(w)
}

// count is the first pass: the sequences, and their testcases counted
// only.
func (jw *junitWriter) count() error {
	z := &results.Summarizer{
		Options: jw.opts.Summary,
		OnStart: func(int, *results.Sequence) { jw.countStart() },
		OnStep: func(_ int, st *results.Step) {
			if !jw.retries.diverted(st) {
				jw.countStep(st)
			}
		},
		OnEnd:     func(_ int, seq *results.Sequence, c results.Counts) { jw.countEnd(seq, c) },
		OnAttempt: func(_ int, a *results.Attempt) { jw.onAttempt(a) },
	}
	z.BenchHooks = jw.benches.Hooks()
	if err := results.Summarize(jw.events, z); err != nil {
		return err
	}
	jw.benchSuites = benchSuites(&jw.benches)
	return nil
}

func (jw *junitWriter) countStart() {
	jw.seqs = append(jw.seqs, seqSummary{width: 2, finallyWidth: 1})
	jw.counts = append(jw.counts, suiteCounts{})
	jw.stops = append(jw.stops, interruption{})
	n := len(jw.seqs) - 1
	jw.cb = newCaseBuilder(&jw.seqs[n], jw.opts.Summary, func(tc *junit.Testcase) { jw.counts[n].add(tc) })
	jw.retries = newSeqRetries(&jw.seqs[n], jw.attempts[n], jw.opts.Summary)
}

func (jw *junitWriter) countStep(st *results.Step) {
	n := len(jw.seqs) - 1
	s := &jw.seqs[n]
	s.steps = true
	if rest, ok := strings.CutPrefix(st.Path, finallyPrefix); ok {
		s.finallyWidth = max(s.finallyWidth, leadingDigits(rest))
	} else {
		s.width = max(s.width, leadingDigits(st.Path))
	}
	jw.stops[n].observe(st)
	jw.cb.add(st)
}

func (jw *junitWriter) countEnd(seq *results.Sequence, c results.Counts) {
	n := len(jw.seqs) - 1
	cb, counts := jw.cb, &jw.counts[n]
	jw.seqs[n].seq, jw.seqs[n].counts = *seq, c
	cb.flush()
	if tc := jw.stops[n].testcase(&jw.seqs[n]); tc != nil {
		counts.add(tc)
	} else if tc := sequenceCase(&jw.seqs[n], cb.problem); tc != nil {
		if cb.firstSkipped {
			// Nothing ran, as when a device did not open: the
			// first case carries the error instead, so the case
			// set stays that of a full run.
			jw.seqs[n].carry = true
			counts.skipped--
			counts.tests--
			counts.add(tc)
		} else {
			counts.add(tc)
			counts.extra = tc
		}
	}
}

func (o JUnitOptions) now() time.Time {
	if o.Now != nil {
		return o.Now()
	}
	return time.Now()
}

package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// Summary prints one line for the whole run and one per sequence, naming the
// first failure or the error of each sequence that did not pass. The run's
// time is the wall time since the first SequenceStarted event, or the sum of
// the sequences' durations when the Console saw no events. Callers print it
// when several sequence files ran; for one, the SequenceFinished line says
// the same.
func (c *Console) Summary(results []runner.SequenceResult) {
	c.mu.Lock()
	defer c.unlock()
	c.urgent = true
	c.summary(results, c.whys, c.started)
}

// SummaryOf prints the summary of sequences that other Consoles printed
// (one per bench of a pool, running at once): problems holds the first
// problem of each, as their Problems gave it, and started is when the
// run started, for its wall time.
func (c *Console) SummaryOf(results []runner.SequenceResult, problems []string, started time.Time) {
	c.mu.Lock()
	defer c.unlock()
	c.urgent = true
	c.summary(results, problems, started)
}

// Problems returns the first problem of each sequence this Console
// printed ("" for one that passed), in order.
func (c *Console) Problems() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.whys)
}

func (c *Console) summary(results []runner.SequenceResult, whys []string, started time.Time) {
	c.buf.Reset()
	c.clearRunning()

	var passed, failed, errored, skipped, interrupted int
	var total time.Duration
	for i := range results {
		total += results[i].Duration
		switch results[i].Status {
		case runner.Passed:
			passed++
		case runner.Failed:
			failed++
		case runner.Skipped:
			skipped++
		case runner.Interrupted:
			interrupted++
		default:
			errored++
		}
	}
	if !started.IsZero() {
		total = c.now().Sub(started)
	}

	if c.wrote {
		c.buf.WriteByte('\n')
	}
	word, colour := "PASSED", ansiGreen
	switch {
	case interrupted > 0:
		word, colour = "INTERRUPTED", ansiYellow
	case errored > 0:
		word, colour = "ERROR", ansiYellow
	case failed > 0:
		word, colour = "FAILED", ansiRed
	case passed == 0:
		word, colour = "NO TESTS", ansiYellow
	}
	counts := fmt.Sprintf("%s: %d passed, %d failed", plural(len(results), "sequence"), passed, failed)
	if errored > 0 {
		counts += ", " + plural(errored, "error")
	}
	if interrupted > 0 {
		counts += fmt.Sprintf(", %d interrupted", interrupted)
	}
	if skipped > 0 {
		counts += fmt.Sprintf(", %d skipped", skipped)
	}
	fmt.Fprintf(&c.buf, "%s %s in %s\n", c.paint(ansiBold+colour, word), counts, seconds(total)+"s")

	for i := range results {
		r := &results[i]
		mark, colour := statusMark(r.Status)
		fmt.Fprintf(&c.buf, "  %s %s (%s) %s", c.paint(colour, mark), cleanLine(r.Name), cleanLine(r.File), c.paint(ansiDim, seconds(r.Duration)+"s"))
		if b := cleanLine(r.Bench); b != "" {
			fmt.Fprintf(&c.buf, " on %s", b)
		}
		why := cleanLine(r.Error)
		if why == "" && i < len(whys) {
			why = whys[i]
		}
		if why != "" {
			fmt.Fprintf(&c.buf, "  %s", c.paint(colour, why))
		}
		c.buf.WriteByte('\n')
	}
	c.wrote = true
	c.flush()
}

// tally counts a finished step, remembers the sequence's first problem,
// and prints the statistics of a finished repeat.
func (c *Console) tally(s *runner.StepResult) {
	if !isContainer(s) {
		c.counts.Add(s.Status)
	}
	if c.why == "" && isProblem(s.Status) {
		why := fmt.Sprintf("step %s %s", cleanLine(s.Path), cleanLine(s.Kind))
		if s.Name != "" {
			why += " " + cleanLine(s.Name)
		}
		if s.Message != "" {
			why += ": " + cleanLine(s.Message)
		}
		c.why = why
	}
	if c.repeats == nil {
		c.repeats = &results.Summarizer{Options: c.opts.Summary, OnStep: func(_ int, st *results.Step) { c.repeat = st }}
	}
	// The summarizer needs only paths, statuses and times: leave out the
	// values, which it would copy.
	st := results.Step{StepBase: results.StepBase{Path: s.Path, Kind: s.Kind, Name: s.Name, Status: s.Status,
		StartedMS: results.MS(s.Started), DurationMS: results.MS(s.Duration), Measurement: s.Measurement}}
	c.repeat = nil
	c.repeats.Add(&results.Record{Type: results.RecordStep, Step: &st})
	if c.repeat == nil || c.repeat.Repeat == nil || (s.Status == runner.Skipped && c.repeat.Repeat.Iterations == 0) {
		return
	}
	r := c.repeat.Repeat
	depth := groupDepth(s.Group)
	if s.Kind == "group" {
		depth--
	}
	detail := strings.Repeat("  ", depth+1) + c.branchTag(s) + "    "
	line := fmt.Sprintf("%d iterations: %d passed, %d failed", r.Iterations, r.Passed, r.Failed)
	if r.Errored > 0 {
		line += ", " + plural(r.Errored, "error")
	}
	if r.Iterations > 0 {
		line += fmt.Sprintf("; min %s, median %s, p99 %s, max %s", fmtMS(r.MinMS), fmtMS(r.MedianMS), fmtMS(r.P99MS), fmtMS(r.MaxMS))
	}
	fmt.Fprintf(&c.buf, "%s%s\n", detail, c.paint(ansiDim, line))
	c.measureLines(detail, r)
	if len(r.Failures) > 0 {
		idx := make([]string, len(r.Failures))
		for i, it := range r.Failures {
			idx[i] = strconv.Itoa(it.Index)
		}
		more := ""
		if r.MoreFailures > 0 {
			more = fmt.Sprintf(" and %d more", r.MoreFailures)
		}
		fmt.Fprintf(&c.buf, "%s%s\n", detail, c.paint(ansiRed, "failing iterations: "+strings.Join(idx, ", ")+more))
	}
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

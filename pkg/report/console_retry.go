package report

import (
	"fmt"

	"github.com/hilrun/hilrun/pkg/runner"
)

// attempt prints the end of an attempt of a sequence or group with
// retries: "↻ adc: attempt 1 of 3 failed: ...; retrying", or that the
// last attempt passed after others did not. The executions of an
// attempt that was retried leave the counts for "retried".
func (c *Console) attempt(a *runner.AttemptResult) {
	if a == nil {
		return
	}
	name := cleanLine(a.Name)
	if name == "" {
		name = "sequence"
	}
	indent := "  "
	if a.Scope != "" {
		indent = "    "
	}
	switch {
	case a.Retried:
		c.counts.Passed -= a.Executions.Passed
		c.counts.Failed -= a.Executions.Failed
		c.counts.Errored -= a.Executions.Errored
		c.counts.Skipped -= a.Executions.Skipped
		c.counts.Interrupted -= a.Executions.Interrupted
		c.counts.Retried += a.Executions.Total()
		c.why = ""
		line := fmt.Sprintf("%s: %s %s", name, a.String(), reportStatus(a.Status))
		if a.Message != "" {
			line += ": " + cleanLine(a.Message)
		}
		fmt.Fprintf(&c.buf, "%s%s %s; retrying\n", indent, c.paint(ansiYellow, "↻"), line)
	case a.Status == runner.Passed && a.Attempt > 1:
		fmt.Fprintf(&c.buf, "%s%s %s: flaky, passed on %s\n", indent, c.paint(ansiYellow, "↻"), name, a.String())
	}
	c.wrote = true
}

// retryCounts is what sequenceFinished adds for retries: ", 2 retried".
func retryCounts(r *runner.SequenceResult, retried int) (prefix, suffix string) {
	if retried > 0 {
		suffix = fmt.Sprintf(", %d retried", retried)
	}
	if r.Flaky {
		prefix = "flaky, passed after a retry; "
	}
	return prefix, suffix
}

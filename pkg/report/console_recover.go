package report

import (
	"fmt"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// Recovery prints a climb of a bench's recovery ladder, between
// sequences: why it ran, each rung with the health check after it, and how
// it ended.
//
//	↻ bench left: the health check failed before boot.yaml: timed out after 2s waiting for "$ "
//	    ✗ rung 1 send reboot  0.4ms  health: timed out after 2s waiting for "$ "
//	    ✓ rung 2 power cycle  2.1s  health passed
//	  recovered by rung 2 (power cycle) in 6.130s
func (c *Console) Recovery(r *results.Recovery) {
	c.mu.Lock()
	defer c.unlock()
	c.urgent = true
	c.buf.Reset()
	c.clearRunning()
	if c.wrote {
		c.buf.WriteByte('\n')
	}
	c.wrote = true
	fmt.Fprintf(&c.buf, "%s bench %s: %s\n", c.paint(ansiYellow, "↻"), cleanLine(r.Bench), cleanLine(r.Why()))
	for _, g := range r.Rungs {
		mark, colour := statusMark(g.Health.Status)
		health := "health passed"
		if !g.Worked() {
			health = "health: " + cleanLine(g.Health.Message)
		}
		line := fmt.Sprintf("rung %d %s  %s", g.Index, cleanLine(g.Label), c.paint(ansiDim, fmtMS(g.DurationMS)))
		if g.Status != runner.Passed && g.Message != "" {
			line += "  " + c.paint(ansiRed, cleanLine(g.Message))
		}
		fmt.Fprintf(&c.buf, "    %s %s  %s\n", c.paint(colour, mark), line, c.paint(colour, health))
	}
	colour := ansiGreen
	if !r.Recovered {
		colour = ansiRed
	}
	fmt.Fprintf(&c.buf, "  %s in %s\n", c.paint(colour, r.Outcome()), seconds(r.DurationMS.D())+"s")
	c.drawRunning()
	c.flush()
}

// MarkedBad says that a bench is bad and takes no more work.
func (c *Console) MarkedBad(b *results.BadBench) {
	c.mu.Lock()
	defer c.unlock()
	c.urgent = true
	c.buf.Reset()
	c.clearRunning()
	fmt.Fprintf(&c.buf, "%s bench %s is bad: it takes no more work\n", c.paint(ansiRed, "✗"), cleanLine(b.Bench))
	c.wrote = true
	c.drawRunning()
	c.flush()
}

// BadBenches prints, after the summary, the benches marked bad during the
// run, each with why; nothing when there are none.
func (c *Console) BadBenches(bad []results.BadBench) {
	if len(bad) == 0 {
		return
	}
	c.mu.Lock()
	defer c.unlock()
	c.urgent = true
	c.buf.Reset()
	c.clearRunning()
	if c.wrote {
		c.buf.WriteByte('\n')
	}
	n := "1 bench"
	if len(bad) > 1 {
		n = fmt.Sprintf("%d benches", len(bad))
	}
	fmt.Fprintf(&c.buf, "%s %s\n", c.paint(ansiBold+ansiRed, "BAD BENCHES"), n)
	for _, b := range bad {
		fmt.Fprintf(&c.buf, "  %s %s  %s\n", c.paint(ansiRed, "✗"), cleanLine(b.Bench), c.paint(ansiRed, cleanLine(b.Reason)))
	}
	c.wrote = true
	c.flush()
}

package report

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hilrun/hilrun/pkg/runner"
)

// Defaults of ConsoleOptions.WaitingAfter and WaitingEvery.
const (
	DefaultWaitingAfter = 10 * time.Second
	DefaultWaitingEvery = 30 * time.Second
)

// receivedKeep is how many of the last bytes a console printed the
// Console keeps, to say what a long step last heard.
const receivedKeep = 256

// waiting is the step running now, as far as the Console knows.
type waiting struct {
	step    *runner.StepResult
	started time.Time // the StepStarted event's time
	// gen tells a timer armed for this step from one armed for an
	// earlier step that fired late.
	gen  uint64
	stop func() bool
}

// setupFailed prints why no step ran, before the steps listed as not run.
func (c *Console) setupFailed(e runner.Event) {
	if e.Result == nil || e.Result.Error == "" {
		return
	}
	c.clearRunning()
	fmt.Fprintf(&c.buf, "  %s %s\n", c.paint(ansiYellow, "!"), c.paint(ansiYellow, cleanLine(e.Result.Error)))
	// Under --sim the virtual board's port is there; elsewhere the path
	// may be wrong, and the list of ports tells which is right.
	if e.Console != "" && string(e.Data) != "--sim" {
		fmt.Fprintf(&c.buf, "      %s\n", c.paint(ansiDim, "`hilrun ports` lists the serial ports of this machine"))
	}
	c.wrote = true
}

// startWaiting notes that leaf step s started, and arms the timer that
// shows it is alive: every second on a terminal, after WaitingAfter and
// then every WaitingEvery otherwise. The branches of a parallel: step
// each have a step running; the running line shows the one that started
// last.
func (c *Console) startWaiting(e runner.Event) {
	s := e.Step
	if s == nil {
		c.stopWaiting()
		return
	}
	c.stopWaitingFor(s.Branch)
	if isContainer(s) {
		return
	}
	started := e.Time
	if started.IsZero() {
		started = time.Now()
	}
	c.gen++
	w := &waiting{step: s, started: started, gen: c.gen}
	if c.waits == nil {
		c.waits = map[string]*waiting{}
	}
	c.waits[s.Branch] = w
	c.wait = w
	c.arm(w, c.firstWait())
}

// stopWaiting forgets the running steps and their timers.
func (c *Console) stopWaiting() {
	for _, w := range c.waits {
		if w.stop != nil {
			w.stop()
		}
	}
	c.waits, c.wait = nil, nil
}

// stopWaitingFor forgets the step running in branch ("" outside any).
func (c *Console) stopWaitingFor(branch string) {
	w := c.waits[branch]
	if w == nil {
		return
	}
	if w.stop != nil {
		w.stop()
	}
	delete(c.waits, branch)
	if c.wait == w {
		c.wait = nil
		for _, o := range c.waits {
			if c.wait == nil || o.gen > c.wait.gen {
				c.wait = o
			}
		}
	}
}

func (c *Console) firstWait() time.Duration {
	if c.opts.Color {
		return time.Second
	}
	if c.opts.WaitingAfter > 0 {
		return c.opts.WaitingAfter
	}
	return DefaultWaitingAfter
}

func (c *Console) nextWait() time.Duration {
	if c.opts.Color {
		return time.Second
	}
	if c.opts.WaitingEvery > 0 {
		return c.opts.WaitingEvery
	}
	return DefaultWaitingEvery
}

// arm calls tick after d, unless step w has finished by then.
func (c *Console) arm(w *waiting, d time.Duration) {
	gen := w.gen
	after := c.opts.AfterFunc
	if after == nil {
		after = func(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }
	}
	w.stop = after(d, func() { c.tick(gen) })
}

// tick shows that the step armed as gen is still running.
func (c *Console) tick(gen uint64) {
	c.mu.Lock()
	defer c.unlock()
	var w *waiting
	for _, o := range c.waits {
		if o.gen == gen {
			w = o
		}
	}
	if w == nil {
		return
	}
	c.buf.Reset()
	c.urgent = true // a timer's goroutine: writing here costs the run nothing
	if c.opts.Color {
		if w == c.wait {
			c.clearRunning()
			c.running = c.runningText(c.now().Sub(w.started))
			c.drawRunning()
		}
	} else {
		c.stillWaiting(w)
	}
	c.flush()
	c.arm(w, c.nextWait())
}

// stillWaiting prints a line saying how long the running step has waited
// and what was last received, for logs that are not a terminal.
func (c *Console) stillWaiting(w *waiting) {
	s := w.step
	line := fmt.Sprintf("… step %s %s", cleanLine(s.Path), cleanLine(s.Kind))
	if s.Name != "" {
		line += " " + cleanLine(s.Name)
	}
	line += ": still running after " + roundSeconds(c.now().Sub(w.started))
	if s.Timeout > 0 {
		line += " of " + roundSeconds(s.Timeout)
	}
	if c.lastFrom != "" {
		line += fmt.Sprintf("; last received from %s: %s", cleanLine(c.lastFrom), lastReceived(c.last))
	} else {
		line += "; nothing received"
	}
	depth := groupDepth(s.Group)
	fmt.Fprintf(&c.buf, "%s%s\n", strings.Repeat("  ", depth+1)+"  "+c.branchTag(s), line)
	c.wrote = true
}

// runningText is the transient line of the running step: what it is, how
// long it has run and, when it has one, its timeout.
func (c *Console) runningText(elapsed time.Duration) string {
	s := c.wait.step
	clock := roundSeconds(elapsed)
	if s.Timeout > 0 {
		clock += " / " + roundSeconds(s.Timeout)
	}
	text := "running: step " + cleanLine(s.Path) + " " + cleanLine(s.Kind)
	if s.Name != "" {
		text += " " + cleanLine(s.Name)
	}
	if room := runningWidth - 2 - utf8.RuneCountInString(clock); utf8.RuneCountInString(text) > room {
		text = string([]rune(text)[:room-1]) + "…"
	}
	return text + "  " + clock
}

// received keeps the last bytes console printed.
func (c *Console) received(console string, data []byte) {
	if console != c.lastFrom {
		c.lastFrom, c.last = console, c.last[:0]
	}
	if len(data) > receivedKeep {
		data = data[len(data)-receivedKeep:] // only the tail is kept
	}
	c.last = append(c.last, data...)
	if n := len(c.last); n > receivedKeep {
		c.last = append(c.last[:0], c.last[n-receivedKeep:]...)
	}
}

// streams reports whether output from console is that of the build or
// upload step running now, which is printed without Verbose when the
// report is not on a terminal: a long build shows it is alive.
func (c *Console) streams(console string) bool {
	if c.opts.Color || c.wait == nil {
		return false
	}
	k := c.wait.step.Kind
	return (k == "build" || k == "upload") && console == k
}

// lastReceived quotes the last non-empty line of b, at most 60 runes of it.
func lastReceived(b []byte) string {
	text := strings.TrimRight(string(b), "\r\n")
	if i := strings.LastIndexByte(text, '\n'); i >= 0 {
		text = text[i+1:]
	}
	text = strings.TrimSuffix(text, "\r")
	q := cleanLine(text)
	if r := []rune(q); len(r) > 60 {
		q = "…" + string(r[len(r)-59:])
	}
	return `"` + q + `"`
}

// roundSeconds formats d in whole seconds, as "12s".
func roundSeconds(d time.Duration) string {
	return fmt.Sprintf("%ds", int64(d.Round(time.Second)/time.Second))
}

// notice announces what happened to a console's connection, such as a
// reconnection, whatever the verbosity: it explains the gap that follows.
func (c *Console) notice(e runner.Event) {
	c.clearRunning()
	fmt.Fprintf(&c.buf, "      %s\n", c.paint(ansiYellow, consoleLabel(e.Console)+" "+cleanLine(string(e.Data))))
	c.wrote = true
	c.drawRunning()
}

package report

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/term"

	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// ANSI SGR sequences used by the console reporter.
const (
	ansiReset  = "\x1b[0m"
	ansiBold   = "\x1b[1m"
	ansiDim    = "\x1b[2m"
	ansiRed    = "\x1b[31m"
	ansiGreen  = "\x1b[32m"
	ansiYellow = "\x1b[33m"
	// ansiClearLine returns to the start of the line and erases it, removing
	// the transient "running" line.
	ansiClearLine = "\r\x1b[K"
)

// receivedTailLines bounds how much of a step's Received text the console
// shows; the JUnit and JSON reports carry all of it.
const receivedTailLines = 10

// runningWidth bounds the transient "running" line, in runes, so that it fits
// on one row of an ordinary terminal: a wrapped line could not be erased with
// a single carriage return.
const runningWidth = 72

// partialLineLimit is how many bytes of an unterminated console line verbose
// mode holds back before printing them anyway.
const partialLineLimit = 4096

// ConsoleOptions configures a Console.
type ConsoleOptions struct {
	// Color turns on ANSI colours and the transient "running" line. Set it
	// only when writing to a terminal; ColorFor decides that for a file.
	Color bool
	// Verbose also prints what the consoles printed and what was sent to
	// them, line by line, prefixed by the console name and dimmed.
	Verbose bool
	// Now is the clock Summary measures the run's wall time with; nil means
	// time.Now.
	Now func() time.Time
	// Summary bounds what a finished repeat lists (package results).
	Summary results.Options
	// WaitingAfter and WaitingEvery are when a step that is still running
	// gets a line saying so, with what was last received, when Color is
	// off: first after WaitingAfter, then every WaitingEvery; 0 means
	// DefaultWaitingAfter (10 s) and DefaultWaitingEvery (30 s). With
	// Color the running line counts the seconds instead.
	WaitingAfter, WaitingEvery time.Duration
	// Hold, when more than 0, keeps what the console prints off the run's
	// path: it is written when the run waits for its device (Idle), at the
	// latest Hold after it was printed, and before Event, Summary and the
	// other methods that end a sequence or a run return; Flush writes it
	// at once. With Color the running line is drawn as it is when written.
	// 0 writes what each event prints before Event returns.
	Hold time.Duration
	// AfterFunc calls f after d and returns a function that stops it, as
	// time.AfterFunc does; nil means time.AfterFunc. Tests drive the
	// clock with it.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
}

// ColorFor reports whether output to f should be coloured: f is a terminal,
// NO_COLOR is unset or empty in env (https://no-color.org) and TERM is not
// "dumb". A nil f is never coloured.
func ColorFor(f *os.File, env environ.Env) bool {
	if f == nil {
		return false
	}
	return colorEnabled(term.IsTerminal(int(f.Fd())), env.Get)
}

// colorEnabled is ColorFor's decision with the terminal check and the
// environment made explicit, for tests.
func colorEnabled(isTerminal bool, getenv func(string) string) bool {
	return isTerminal && getenv("NO_COLOR") == "" && getenv("TERM") != "dumb"
}

// Console is a runner.Sink that prints a live, human-readable report: a
// header per sequence, one line per finished step with the details of
// failures, and a summary line per sequence.
//
// Console assumes the events of one sequence are not interleaved with those
// of another. Its methods are safe for concurrent use. Each event is written
// with a single Write call; the first write error stops further output and is
// returned by Err.
type Console struct {
	w    io.Writer
	opts ConsoleOptions

	mu      sync.Mutex
	buf     bytes.Buffer
	err     error
	started time.Time         // when the first sequence started, by opts.Now
	wrote   bool              // anything was printed, so a new header gets a blank line
	file    string            // file of the current sequence, for steps that name none
	groups  map[string]string // by branch ("" outside one): the group whose header was printed last in this sequence
	running string            // transient line on screen, "" when none
	partial map[string][]byte
	// counts and why are those of the current sequence: the counts of its
	// steps that are not groups or repeats, and its first problem.
	counts results.Counts
	why    string
	// whys holds the first problem of each finished sequence, for Summary.
	whys []string
	// repeats applies the summary rule to the current sequence's steps, so
	// a finished repeat prints its statistics.
	repeats *results.Summarizer
	repeat  *results.Step
	// waits are the leaf steps running now, by branch ("" outside any),
	// and wait the one that started last; gen counts the steps started.
	waits map[string]*waiting
	wait  *waiting
	gen   uint64
	// last holds the last bytes lastFrom printed.
	last     []byte
	lastFrom string
	// With Hold (see console_hold.go): out is what was printed and not yet
	// written, shown the running line on screen as last written; urgent
	// says out must be written before the method returns; armed that the
	// timer will write it. wmu orders the writes, wbuf is the write's,
	// both taken before mu.
	out   bytes.Buffer
	shown string
	// shownFor and shownSecs are the step and the seconds shown drew.
	shownFor  *waiting
	shownSecs int64
	urgent    bool
	armed     bool
	timer     *time.Timer
	wmu       sync.Mutex
	wbuf      bytes.Buffer
	// born is when the Console was made, lastWrite when it last wrote
	// (by nanotime), for Idle.
	born      time.Time
	lastWrite atomic.Int64
}

var _ runner.Sink = (*Console)(nil)

// NewConsole returns a Console writing to w.
func NewConsole(w io.Writer, opts ConsoleOptions) *Console {
	c := &Console{w: w, opts: opts, born: time.Now()}
	c.lastWrite.Store(-int64(idleEvery)) // the first Idle writes
	return c
}

// Err returns the first error writing to the underlying writer, or nil.
func (c *Console) Err() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// Event prints what e reports.
func (c *Console) Event(e runner.Event) {
	c.mu.Lock()
	defer c.unlock()
	c.buf.Reset()
	switch e.Type {
	case runner.SequenceStarted:
		c.sequenceStarted(e)
	case runner.SetupFailed:
		c.setupFailed(e)
	case runner.ConsoleNotice:
		c.notice(e)
	case runner.StepStarted:
		c.branchStarted(e.Step)
		c.startWaiting(e)
		c.stepStarted(e.Step)
	case runner.ConsoleOutput:
		c.received(e.Console, e.Data)
		if c.opts.Verbose || c.streams(e.Console) {
			c.consoleOutput(e.Console, e.Data)
		}
	case runner.ConsoleInput:
		if c.opts.Verbose {
			c.consoleInput(e.Console, e.Data)
		}
	case runner.StepFinished:
		if e.Step != nil {
			c.stopWaitingFor(e.Step.Branch)
			c.flushPartial()
			c.clearRunning()
			c.step(e.Step)
			c.tally(e.Step)
		}
	case runner.AttemptFinished:
		c.stopWaiting()
		c.flushPartial()
		c.clearRunning()
		c.attempt(e.Attempt)
	case runner.SequenceFinished:
		c.stopWaiting()
		c.flushPartial()
		c.clearRunning()
		c.sequenceFinished(e)
		c.urgent = true
	}
	c.flush()
}

func (c *Console) sequenceStarted(e runner.Event) {
	c.clearRunning()
	if c.started.IsZero() {
		c.started = c.now()
	}
	c.file = e.File
	c.groups = nil
	c.partial = nil
	c.counts, c.why, c.repeats = results.Counts{}, "", nil
	if c.wrote {
		c.buf.WriteByte('\n')
	}
	fmt.Fprintf(&c.buf, "%s %s (%s)\n", c.paint(ansiBold, "▶"), c.paint(ansiBold, cleanLine(e.Sequence)), cleanLine(e.File))
	c.wrote = true
}

func (c *Console) stepStarted(s *runner.StepResult) {
	if !c.opts.Color || s == nil || c.wait == nil || c.held() {
		return // held: the running line is drawn when written
	}
	c.clearRunning()
	c.running = c.runningText(0)
	c.drawRunning()
}

// step prints the line of a finished step and, for a failure, its details.
func (c *Console) step(s *runner.StepResult) {
	// Steps indent by group depth. Returning to an enclosing group needs no
	// header: its header is above and the indentation shows the way back.
	depth := groupDepth(s.Group)
	tag := c.branchTag(s)
	c.header(s, tag)
	indent := strings.Repeat("  ", depth+1) + tag
	mark, colour := statusMark(s.Status)

	var line strings.Builder
	line.WriteString(indent)
	line.WriteString(c.paint(colour, mark))
	line.WriteString(" ")
	line.WriteString(c.paint(ansiDim, "[+"+seconds(s.Started)+"s]"))
	fmt.Fprintf(&line, " step %-4s %-7s", cleanLine(s.Path), cleanLine(s.Kind))
	if s.Name != "" {
		line.WriteString(" ")
		line.WriteString(cleanLine(s.Name))
	}
	line.WriteString("  ")
	line.WriteString(c.paint(ansiDim, fmt.Sprintf("%.1fms", float64(s.Duration)/float64(time.Millisecond))))
	if s.Message != "" {
		switch {
		case isProblem(s.Status):
			line.WriteString("  " + c.paint(colour, cleanLine(s.Message)))
		case s.Status == runner.Skipped || c.opts.Verbose || s.Measurement != nil:
			line.WriteString("  " + c.paint(ansiDim, cleanLine(s.Message)))
		}
	}
	c.buf.WriteString(strings.TrimRight(line.String(), " "))
	c.buf.WriteByte('\n')

	detail := indent + "    "
	if label, values, ok := labelledValues(s.Data); ok {
		fmt.Fprintf(&c.buf, "%s%s: %s\n", detail, cleanLine(label), values)
	}
	for _, a := range s.Attachments {
		fmt.Fprintf(&c.buf, "%s%s\n", detail, c.paint(ansiDim, "picture: "+cleanLine(a)))
	}
	if !isProblem(s.Status) {
		return
	}
	if sent, ok := sentText(s.Data); ok {
		fmt.Fprintf(&c.buf, "%ssent: %s\n", detail, sent)
	}
	if s.Expected != "" {
		fmt.Fprintf(&c.buf, "%sexpected: %s\n", detail, cleanLine(s.Expected))
	}
	if s.Received != "" {
		lines := strings.Split(strings.TrimSuffix(s.Received, "\n"), "\n")
		head := "received:"
		if len(lines) > receivedTailLines {
			head = fmt.Sprintf("received (last %d of %d lines):", receivedTailLines, len(lines))
			lines = lines[len(lines)-receivedTailLines:]
		}
		fmt.Fprintf(&c.buf, "%s%s\n", detail, head)
		for _, l := range lines {
			fmt.Fprintf(&c.buf, "%s  %s%s\n", detail, c.paint(ansiDim, "│ "), cleanText(strings.TrimSuffix(l, "\r")))
		}
	}
	if loc := locationOf(s.File, s.Line, s.Column, c.file); loc != "" {
		fmt.Fprintf(&c.buf, "%s%s\n", detail, c.paint(ansiDim, "at "+loc))
	}
}

func (c *Console) sequenceFinished(e runner.Event) {
	r := e.Result
	if r == nil {
		return
	}
	n := c.counts
	n.Steps = r.StepsWritten
	if n.Steps == 0 {
		n.Steps = n.Total
	}
	passed, failed, errored, skipped := n.Passed, n.Failed, n.Errored, n.Skipped
	why := c.why
	if r.Error != "" {
		why = cleanLine(r.Error)
	}
	c.whys = append(c.whys, why)
	c.counts, c.why, c.repeats = results.Counts{}, "", nil
	counts := fmt.Sprintf("%s, %d passed, %d failed", n.Text(), passed, failed)
	if errored > 0 {
		counts += ", " + plural(errored, "error")
	}
	if n.Interrupted > 0 {
		counts += fmt.Sprintf(", %d interrupted", n.Interrupted)
	}
	if skipped > 0 {
		counts += fmt.Sprintf(", %d skipped", skipped)
	}
	pre, post := retryCounts(r, n.Retried)
	counts = pre + counts + post + " in " + seconds(r.Duration) + "s"

	var word, colour string
	switch r.Status {
	case runner.Passed:
		word, colour = "PASSED", ansiGreen
	case runner.Failed:
		word, colour = "FAILED", ansiRed
	case runner.Skipped:
		word, colour = "SKIPPED", ansiDim
	case runner.Interrupted:
		word, colour = "INTERRUPTED", ansiYellow
	default:
		word, colour = "ERROR", ansiYellow
	}
	name := cleanLine(r.Name)
	if r.Error != "" {
		fmt.Fprintf(&c.buf, "%s %s: %s (%s)\n", c.paint(ansiBold+colour, word), name, c.paint(colour, cleanLine(r.Error)), counts)
	} else {
		fmt.Fprintf(&c.buf, "%s %s: %s\n", c.paint(ansiBold+colour, word), name, counts)
	}
	c.groups = nil
	c.wrote = true
}

func (c *Console) flush() {
	if c.buf.Len() == 0 || c.err != nil {
		return
	}
	if c.held() {
		c.hold()
		return
	}
	if _, err := c.w.Write(c.buf.Bytes()); err != nil {
		c.err = fmt.Errorf("write console report: %w", err)
	}
}

func (c *Console) paint(code, s string) string {
	if !c.opts.Color || s == "" {
		return s
	}
	return code + s + ansiReset
}

func (c *Console) now() time.Time {
	if c.opts.Now != nil {
		return c.opts.Now()
	}
	return time.Now()
}

// header prints the header of s's group when the last one printed in
// its branch (or outside branches) was another's. Each branch of a
// parallel: step has its own headers, prefixed as its steps are; the
// groups around the parallel: step are headed once, unprefixed.
func (c *Console) header(s *runner.StepResult, tag string) {
	last := c.groups[s.Branch]
	if s.Group == last {
		return
	}
	if s.Group != "" && !strings.HasPrefix(last, s.Group+groupSeparator) {
		fmt.Fprintf(&c.buf, "%s%s%s %s\n", strings.Repeat("  ", groupDepth(s.Group)), tag, c.paint(ansiBold, "▸"), c.paint(ansiBold, cleanLine(s.Group)))
	}
	c.setGroup(s.Branch, s.Group)
}

// setGroup records group as the last headed in branch.
func (c *Console) setGroup(branch, group string) {
	if c.groups == nil {
		c.groups = map[string]string{}
	}
	c.groups[branch] = group
}

// branchStarted heads the groups around a parallel: step as it starts,
// so that its branches begin below them.
func (c *Console) branchStarted(s *runner.StepResult) {
	switch {
	case s == nil:
	case s.Kind == "parallel":
		c.header(s, "")
	case s.Kind == "branch" && s.Branch != "":
		c.setGroup(s.Branch, s.Group)
	}
}

// branchTag is what the lines of a step in a branch of a parallel: step
// begin with, "[NAME] ", so that the branches' interleaved lines read
// apart; "" outside a branch.
func (c *Console) branchTag(s *runner.StepResult) string {
	if s.Branch == "" {
		return ""
	}
	return c.paint(ansiBold, "["+cleanLine(s.Branch)+"]") + " "
}

// statusMark returns the mark and colour of a status.
func statusMark(s runner.Status) (mark, colour string) {
	switch s {
	case runner.Passed:
		return "✓", ansiGreen
	case runner.Failed:
		return "✗", ansiRed
	case runner.Skipped:
		return "-", ansiDim
	default:
		return "!", ansiYellow
	}
}

// groupSeparator joins the names of nested groups in StepResult.Group.
const groupSeparator = " / "

// groupDepth is how many named groups enclose a step in group.
func groupDepth(group string) int {
	if group == "" {
		return 0
	}
	return strings.Count(group, groupSeparator) + 1
}

package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/term"

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
	// AfterFunc calls f after d and returns a function that stops it, as
	// time.AfterFunc does; nil means time.AfterFunc. Tests drive the
	// clock with it.
	AfterFunc func(d time.Duration, f func()) (stop func() bool)
}

// ColorFor reports whether output to f should be coloured: f is a terminal,
// NO_COLOR is unset or empty (https://no-color.org) and TERM is not "dumb".
// A nil f is never coloured.
func ColorFor(f *os.File) bool {
	if f == nil {
		return false
	}
	return colorEnabled(term.IsTerminal(int(f.Fd())), os.Getenv)
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
	started time.Time // when the first sequence started, by opts.Now
	wrote   bool      // anything was printed, so a new header gets a blank line
	file    string    // file of the current sequence, for steps that name none
	group   string    // group whose header was printed last in this sequence
	running string    // transient line on screen, "" when none
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
	// wait is the leaf step running now; gen counts the steps started.
	wait *waiting
	gen  uint64
	// last holds the last bytes lastFrom printed.
	last     []byte
	lastFrom string
}

var _ runner.Sink = (*Console)(nil)

// NewConsole returns a Console writing to w.
func NewConsole(w io.Writer, opts ConsoleOptions) *Console {
	return &Console{w: w, opts: opts}
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
	defer c.mu.Unlock()
	c.buf.Reset()
	switch e.Type {
	case runner.SequenceStarted:
		c.sequenceStarted(e)
	case runner.SetupFailed:
		c.setupFailed(e)
	case runner.ConsoleNotice:
		c.notice(e)
	case runner.StepStarted:
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
			c.stopWaiting()
			c.flushPartial()
			c.clearRunning()
			c.step(e.Step)
			c.tally(e.Step)
		}
	case runner.SequenceFinished:
		c.stopWaiting()
		c.flushPartial()
		c.clearRunning()
		c.sequenceFinished(e)
	}
	c.flush()
}

// Summary prints one line for the whole run and one per sequence, naming the
// first failure or the error of each sequence that did not pass. The run's
// time is the wall time since the first SequenceStarted event, or the sum of
// the sequences' durations when the Console saw no events. Callers print it
// when several sequence files ran; for one, the SequenceFinished line says
// the same.
func (c *Console) Summary(results []runner.SequenceResult) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.summary(results, c.whys, c.started)
}

// SummaryOf prints the summary of sequences that other Consoles printed
// (one per bench of a pool, running at once): problems holds the first
// problem of each, as their Problems gave it, and started is when the
// run started, for its wall time.
func (c *Console) SummaryOf(results []runner.SequenceResult, problems []string, started time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
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
		StartedMS: results.MS(s.Started), DurationMS: results.MS(s.Duration)}}
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
	detail := strings.Repeat("  ", depth+1) + "    "
	line := fmt.Sprintf("%d iterations: %d passed, %d failed", r.Iterations, r.Passed, r.Failed)
	if r.Errored > 0 {
		line += ", " + plural(r.Errored, "error")
	}
	if r.Iterations > 0 {
		line += fmt.Sprintf("; min %s, median %s, p99 %s, max %s", fmtMS(r.MinMS), fmtMS(r.MedianMS), fmtMS(r.P99MS), fmtMS(r.MaxMS))
	}
	fmt.Fprintf(&c.buf, "%s%s\n", detail, c.paint(ansiDim, line))
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

func (c *Console) sequenceStarted(e runner.Event) {
	c.clearRunning()
	if c.started.IsZero() {
		c.started = c.now()
	}
	c.file = e.File
	c.group = ""
	c.partial = nil
	c.counts, c.why, c.repeats = results.Counts{}, "", nil
	if c.wrote {
		c.buf.WriteByte('\n')
	}
	fmt.Fprintf(&c.buf, "%s %s (%s)\n", c.paint(ansiBold, "▶"), c.paint(ansiBold, cleanLine(e.Sequence)), cleanLine(e.File))
	c.wrote = true
}

func (c *Console) stepStarted(s *runner.StepResult) {
	if !c.opts.Color || s == nil || c.wait == nil {
		return
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
	if s.Group != c.group {
		if s.Group != "" && !strings.HasPrefix(c.group, s.Group+groupSeparator) {
			fmt.Fprintf(&c.buf, "%s%s %s\n", strings.Repeat("  ", depth), c.paint(ansiBold, "▸"), c.paint(ansiBold, cleanLine(s.Group)))
		}
		c.group = s.Group
	}
	indent := strings.Repeat("  ", depth+1)
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
		case s.Status == runner.Skipped || c.opts.Verbose:
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
	counts += " in " + seconds(r.Duration) + "s"

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
	c.group = ""
	c.wrote = true
}

// consoleOutput prints the complete lines in data, holding back an unfinished
// last line until more output or the end of the step.
func (c *Console) consoleOutput(console string, data []byte) {
	if c.partial == nil {
		c.partial = make(map[string][]byte)
	}
	pending := append(c.partial[console], data...)
	var lines [][]byte
	for {
		i := bytes.IndexByte(pending, '\n')
		if i < 0 {
			break
		}
		lines = append(lines, pending[:i])
		pending = pending[i+1:]
	}
	if len(pending) > partialLineLimit {
		lines = append(lines, pending)
		pending = nil
	}
	c.partial[console] = bytes.Clone(pending)
	if len(lines) == 0 {
		return
	}
	c.clearRunning()
	for _, l := range lines {
		c.outputLine(console, "│", l)
	}
	c.drawRunning()
}

// consoleInput prints what was sent to a console.
func (c *Console) consoleInput(console string, data []byte) {
	c.clearRunning()
	c.outputLine(console, "←", bytes.TrimRight(data, "\r\n"))
	c.drawRunning()
}

// flushPartial prints the unfinished lines verbose mode held back.
func (c *Console) flushPartial() {
	if len(c.partial) == 0 {
		return
	}
	c.clearRunning()
	names := make([]string, 0, len(c.partial))
	for name := range c.partial {
		names = append(names, name)
	}
	// Map order is random; sort for stable output.
	slices.Sort(names)
	for _, name := range names {
		if len(c.partial[name]) > 0 {
			c.outputLine(name, "│", c.partial[name])
		}
	}
	c.partial = nil
}

func (c *Console) outputLine(console, sep string, line []byte) {
	text := cleanText(string(bytes.TrimSuffix(line, []byte("\r"))))
	fmt.Fprintf(&c.buf, "      %s\n", c.paint(ansiDim, cleanLine(console)+" "+sep+" "+text))
	c.wrote = true
}

// clearRunning erases the transient line, if one is shown.
func (c *Console) clearRunning() {
	if c.running == "" {
		return
	}
	c.buf.WriteString(ansiClearLine)
	c.running = ""
}

// drawRunning shows the transient line again after other output. It writes no
// newline, so the next clearRunning can erase it.
func (c *Console) drawRunning() {
	if c.running != "" {
		c.buf.WriteString(c.paint(ansiDim, c.running))
	}
}

func (c *Console) flush() {
	if c.buf.Len() == 0 || c.err != nil {
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

// labelledValues formats data["label"] and data["values"], the shape steps use
// for numbers meant to be read in hex, such as memory words. Integers print as
// 0x… padded to data["width"] bits (8, 16, 32, 64: the width of a memory
// step) when that is set; anything else prints with %v.
func labelledValues(data map[string]any) (label, values string, ok bool) {
	label, ok = data["label"].(string)
	if !ok {
		return "", "", false
	}
	v := reflect.ValueOf(data["values"])
	if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return "", "", false
	}
	digits := 0
	if w, ok := toInt(data["width"]); ok && w > 0 && w <= 64 && w%4 == 0 {
		digits = int(w) / 4
	}
	parts := make([]string, v.Len())
	for i := range parts {
		parts[i] = hexValue(v.Index(i).Interface(), digits)
	}
	return withAddress(label, data["address"]), strings.Join(parts, " "), true
}

func hexValue(x any, digits int) string {
	if n, ok := x.(json.Number); ok {
		// A number read back from the event file, exact to 64 bits.
		if u, err := strconv.ParseUint(string(n), 10, 64); err == nil {
			return fmt.Sprintf("0x%0*x", digits, u)
		}
		if f, err := n.Float64(); err == nil {
			x = f
		}
	}
	rv := reflect.ValueOf(x)
	switch rv.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprintf("0x%0*x", digits, rv.Uint())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n := rv.Int(); n >= 0 {
			return fmt.Sprintf("0x%0*x", digits, n)
		}
		return fmt.Sprint(rv.Int())
	case reflect.Float32, reflect.Float64:
		// Numbers that went through JSON or YAML arrive as floats.
		if f := rv.Float(); f >= 0 && f <= 1<<53 && f == float64(uint64(f)) {
			return fmt.Sprintf("0x%0*x", digits, uint64(f))
		}
	}
	return cleanLine(fmt.Sprint(x))
}

func toInt(x any) (int64, bool) {
	if n, ok := x.(json.Number); ok {
		i, err := n.Int64()
		return i, err == nil
	}
	rv := reflect.ValueOf(x)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return int64(rv.Float()), true
	}
	return 0, false
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

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return fmt.Sprintf("%d %ss", n, word)
}

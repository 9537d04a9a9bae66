package runner

import (
	"time"
)

// Status is the outcome of a step or a sequence.
type Status string

// Step and sequence outcomes. Failed means the device misbehaved (an expect
// timed out, an assert was false, a fail_on pattern appeared); Errored means
// the bench did (a port vanished, a tool could not be reached).
const (
	Passed      Status = "passed"
	Failed      Status = "failed"
	Errored     Status = "error"
	Skipped     Status = "skipped"
	Interrupted Status = "interrupted"
)

// StepResult is what one executed step did. Started is the offset from the
// start of the sequence, measured on the monotonic clock.
type StepResult struct {
	// Index counts executed steps from 0 in the order they ran, finally steps
	// included; a step inside a repeat appears once per iteration.
	Index int `json:"index"`
	// Path locates the step in the file: "2", "3.1" (second step of the group
	// at index 3), "finally.0". Iterations of a repeat add "#N": "4#2.0".
	// A branch of a parallel: step adds its name: "5.sender" is branch
	// sender of the parallel at 5, "5.sender.0" its first step and
	// "5.sender.finally.0" its first finally step.
	Path string `json:"path"`
	// Kind is the step kind: send, expect, delay, capture, assert, set, group,
	// repeat, parallel, barrier, and so on; a branch of a parallel: step is
	// kind branch.
	Kind string `json:"kind"`
	// Name is the step's name, or a short description made from its
	// content, with the values of the ${name} references it holds when the
	// step ran ("echo adc=100", not "echo adc=${i}00").
	Name string `json:"name"`
	// Group is the name of the enclosing named group, nested groups joined
	// with " / ", or "" when the step is in no named group.
	Group string `json:"group,omitempty"`
	// Branch is the branch of a parallel: step the step ran in, "" outside
	// any; a branch's own result (kind branch) has its name too.
	Branch string `json:"branch,omitempty"`
	// ID is the step's id: as written (steps.ID in expressions), or "".
	ID string `json:"id,omitempty"`
	// File, Line and Column locate the step in its sequence file.
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`

	Status   Status        `json:"status"`
	Started  time.Duration `json:"-"`
	Duration time.Duration `json:"-"`
	// Timeout is how long the step may wait, set on StepStarted events
	// only; 0 when it has no timeout of its own.
	Timeout time.Duration `json:"-"`
	// Message explains a failure or error in one line; for a passed step it may
	// carry a short summary (what matched, what was captured).
	Message string `json:"message,omitempty"`
	// Expected and Received detail a failed match: what was awaited and the
	// tail of what the console printed, with non-printable bytes escaped.
	Expected string `json:"expected,omitempty"`
	Received string `json:"received,omitempty"`
	// Saved holds the variables the step set.
	Saved map[string]any `json:"saved,omitempty"`
	// Data holds values the step produced: matched text, captured bytes,
	// measured timings.
	Data map[string]any `json:"data,omitempty"`
	// Attachments are files the step made for people to look at: the
	// pictures of a camera capture.
	Attachments []string `json:"attachments,omitempty"`
	// Attempt is the attempt of the innermost sequence or group with
	// retries that the step ran in, from 1; 0 outside any.
	Attempt int `json:"attempt,omitempty"`
	// Attempts are a group's attempts, when it has retries; Flaky says
	// an attempt did not pass and the last did.
	Attempts []AttemptResult `json:"attempts,omitempty"`
	Flaky    bool            `json:"flaky,omitempty"`
	// Tags are a group's tags as -m matches them: its own, then those of
	// the groups around it and the sequence's; nil when it has none.
	// Params are a matrix case's values, in the order written.
	Tags   []string `json:"tags,omitempty"`
	Params Params   `json:"params,omitempty"`
	// Measurement is what a measure step measured; nil for other steps
	// and for a measure whose value could not be had.
	Measurement *Measurement `json:"measurement,omitempty"`
}

// Transcript is everything one console printed during a sequence, up to a
// bound; Truncated counts the bytes dropped from its start.
type Transcript struct {
	Console   string `json:"console"`
	Data      []byte `json:"-"`
	Truncated int64  `json:"truncated,omitempty"`
}

// SequenceResult is the outcome of one sequence file.
type SequenceResult struct {
	Name string `json:"name"`
	File string `json:"file"`
	// Bench names the bench of a pool the sequence ran on; "" outside a
	// pool. The runner leaves it to its caller.
	Bench  string `json:"bench,omitempty"`
	Status Status `json:"status"`
	// StepsWritten counts the sequence's steps as written in its file
	// (steps.Written); the step results count what ran.
	StepsWritten int           `json:"steps_written,omitempty"`
	StartedAt    time.Time     `json:"-"`
	Duration     time.Duration `json:"-"`
	// Error is set when the sequence ended on an infrastructure error or an
	// interruption, in the words shown to the user.
	Error string `json:"error,omitempty"`
	// Steps holds every step's result only when Options.KeepSteps was set.
	Steps       []StepResult `json:"steps"`
	Transcripts []Transcript `json:"-"`
	// Logs lists the raw console log files written for this run, by console.
	Logs map[string]string `json:"logs,omitempty"`
	// Attempts are the sequence's attempts, when it has retries. Flaky
	// says the sequence passed, but only after a retry of it or of a
	// group inside it.
	Attempts []AttemptResult `json:"attempts,omitempty"`
	Flaky    bool            `json:"flaky,omitempty"`
	// Tags are the sequence's own tags.
	Tags []string `json:"tags,omitempty"`
}

// EventType names what an Event reports.
type EventType string

// Event types, in the order a run emits them.
const (
	SequenceStarted EventType = "sequence_started"
	StepStarted     EventType = "step_started"
	ConsoleOutput   EventType = "console_output"
	ConsoleInput    EventType = "console_input"
	StepFinished    EventType = "step_finished"
	// AttemptFinished ends an attempt of a sequence or group with
	// retries, after its steps: Attempt says how it went.
	AttemptFinished  EventType = "attempt_finished"
	SequenceFinished EventType = "sequence_finished"
)

// Event is one item of the runner's event stream. Reporters (console, JUnit,
// JSON, MCP progress, the REPL) consume it. Fields are set according to Type:
// Step for step events, Console and Data for console events, Result for
// SequenceFinished. Time is the wall clock; Offset is the monotonic time since
// the sequence started. Data may be memory the runner reuses once Event
// returns (a console's read buffer): a sink that keeps it copies it.
type Event struct {
	Type     EventType
	Time     time.Time
	Offset   time.Duration
	Sequence string
	File     string
	Step     *StepResult
	Console  string
	Data     []byte
	Result   *SequenceResult
	Attempt  *AttemptResult
}

// Sink receives events. Sinks are called from the runner's goroutines, one
// event at a time, in order; a slow sink slows the run, so sinks that do I/O
// should buffer, and may write what they hold back when Idle says the run
// waits (see Idler).
type Sink interface {
	Event(Event)
}

// Idler is a Sink that does work it held back while the run waits: the
// runner calls Idle right after a send that waits for a reply wrote, as
// the device works on it, and right before it blocks on a device or a
// clock (an expect or capture waiting for bytes, a delay, a poll's
// interval, a barrier), so a sink writes there what it kept off the path
// from one step to the next. Idle is called without the runner's locks, from any
// of a run's lines of execution (the branches of a parallel: step), at
// once: it must be safe for concurrent use and with Event. It should
// return quickly; it must not wait for the run.
type Idler interface {
	Idle()
}

// SinkFunc adapts a function to a Sink.
type SinkFunc func(Event)

// Event calls f(e).
func (f SinkFunc) Event(e Event) { f(e) }

// Tee returns a Sink that passes every event to each of sinks in turn; nil
// sinks are left out. It is an Idler that passes Idle to those of sinks
// that are.
func Tee(sinks ...Sink) Sink {
	t := &tee{}
	for _, s := range sinks {
		if s == nil {
			continue
		}
		t.sinks = append(t.sinks, s)
		if i, ok := s.(Idler); ok {
			t.idlers = append(t.idlers, i)
		}
	}
	return t
}

// tee is what Tee returns.
type tee struct {
	sinks  []Sink
	idlers []Idler
}

func (t *tee) Event(e Event) {
	for _, s := range t.sinks {
		s.Event(e)
	}
}

func (t *tee) Idle() {
	for _, i := range t.idlers {
		i.Idle()
	}
}

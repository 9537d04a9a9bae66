// Package runner executes hilrun sequences: it opens the consoles a sequence
// names, runs its steps with measured timing, keeps variables and results,
// and reports everything as a stream of events.
package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hilrun/hilrun/pkg/redact"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// Console is a serial console as the runner uses it. *serialx.Console
// satisfies it; tests may use anything that behaves like a device.
type Console interface {
	// Write sends p and returns the cursor just before it: the reply to p
	// begins there.
	Write(ctx context.Context, p []byte) (cursor int64, err error)
	Expect(ctx context.Context, from int64, want, failOn []stream.Pattern) (stream.Match, error)
	Capture(ctx context.Context, from int64, opt stream.CaptureOptions) (stream.Capture, error)
	// Cursor is the offset just past the last byte received.
	Cursor() int64
	Tail(lines, maxBytes int) []byte
	Watch(patterns []stream.Pattern, fn func(stream.Hit)) (cancel func())
	OnReceive(fn func(at time.Time, off int64, p []byte)) (remove func())
	Close() error
}

// OpenedConsole is a Console opened for this run alone. OpenedAt is the
// stream offset where its output began: the run's first expect then sees
// everything the device sent since the port opened, however long the
// opening took (an RFC 2217 negotiation, a USB device found again). A
// Console that is not one (a connection borrowed from an MCP session, a
// REPL's console) is seen from its Cursor when the run starts.
type OpenedConsole interface {
	Console
	OpenedAt() int64
}

// Opener opens the console of a device. dev carries the settings after the
// bench file, --port and --sim have bound it. A nil Console with a nil error
// is not allowed.
type Opener func(ctx context.Context, dev *steps.Device) (Console, error)

// Options are what one run is, apart from its sequence: values from the
// command line, where events go, limits, and where artifacts are kept. What
// the run runs on (consoles, probes, tools) is its Bench.
type Options struct {
	// Vars are values from the command line (--var); they override vars in
	// the file.
	Vars map[string]string
	// Sink receives the event stream; nil discards it.
	Sink Sink
	// FinallyContext bounds the finally steps. When nil they run under a
	// context that is not cancelled with the run's, so an interrupted run
	// still cleans up; pass one that a second interrupt cancels.
	FinallyContext context.Context
	// TranscriptLimit bounds each console transcript kept for reports (the
	// last bytes a console printed, for JUnit's system-out), in bytes; 0
	// means 256 KiB. The console logs keep everything.
	TranscriptLimit int
	// ArtifactDir receives pictures and the output of host commands; it is
	// made when first needed. Required when the sequence has camera, exec
	// or power steps.
	ArtifactDir string
	// MaxValueBytes bounds each variable and saved value, and each text
	// built from variables (sends, commands, set), in bytes; 0 means
	// DefaultMaxValueBytes (1 MiB). Past it, the step ends with an error
	// wrapping ErrValueLimit.
	MaxValueBytes int
	// MaxExprWork bounds the operations of each evaluation of an
	// expression (an element a loop or a builtin goes through, or 64
	// bytes of text scanned); 0 means steps.DefaultExprWork (a million).
	// Past it, or once the step's context ends, the evaluation stops and
	// its step ends with an error wrapping steps.ErrExprWork.
	MaxExprWork int
	// MaxExprMemory bounds the lists and maps each evaluation of an
	// expression makes, in bytes at 16 a cell; 0 means
	// steps.DefaultExprMemory (16 MiB). Past it, the step ends with an
	// error wrapping steps.ErrExprMemory.
	MaxExprMemory int
	// MaxSteps bounds the steps the run executes, each iteration of a
	// repeat's steps counted (groups and repeats themselves are not);
	// 0 means no limit. Past it, the run ends with an error wrapping
	// ErrStepLimit. Finally steps have a budget of their own, so they
	// still run: the sequence's, and each branch's of a parallel: step.
	MaxSteps uint64
	// KeepSteps keeps every step's result in SequenceResult.Steps. Leave it
	// off for runs of any length: memory then stays flat, and the steps
	// reach reports only through the Sink (see package results). It suits
	// short runs that read the results directly, such as the REPL's.
	KeepSteps bool
	// Retries is how many times a sequence whose file does not say
	// retries: runs again after an attempt that did not pass (hilrun run
	// --retries); 0 means never.
	Retries int
	// Secrets are the values ${name} gives sends and commands for the
	// sequence's secrets; every event and the result pass through them,
	// so no report holds a value (see secrets.go). nil has none.
	Secrets *redact.Set
}

// Error kinds a step can end with; the runner classifies every failure as
// one of them.
var (
	// ErrSequenceTimeout is the cause when the sequence's own timeout passed.
	ErrSequenceTimeout = errors.New("sequence timeout")
	errStepTimeout     = errors.New("step timeout")
)

// Run executes seq on bench and returns its result; it never panics on a
// bad device. Cancelling ctx interrupts the run: the current step stops,
// finally steps run, and the result says Interrupted.
func Run(ctx context.Context, seq *steps.Sequence, bench Bench, opts Options) *SequenceResult {
	r := newRun(seq, bench, opts)
	return r.run(ctx)
}

// run is one line of execution of a run: the sequence's own, or a branch
// of a parallel: step that runs beside others (see branch.go). What the
// lines share is in *shared; the fields here belong to this line alone,
// so a branch reads and writes them without locks.
type run struct {
	*shared
	cursor map[string]int64
	// sent holds, per device, where the reply to the previous send began
	// (see waitPrompt); a device without an entry has had no send yet.
	sent    map[string]SendMark
	vars    map[string]any
	stepRes map[string]any
	// open holds, per group or repeat being run, the worst status of the
	// steps finished inside it so far: a container's status comes from it,
	// not from a list of its steps.
	open []Status
	// timed, when not nil, releases the thread a timed wait ended on
	// (see sleepTimed): it is still locked and real-time so that the send
	// that follows writes at that priority.
	timed func()
	// wrote is when the last send without an expect finished writing, if
	// it was the last step run: a delay right after it counts from there,
	// as the device sees it (see delay).
	wrote time.Time
	// attempts are the attempts of sequences and groups with retries
	// being run, outermost first.
	attempts []*attempt
	// branch is the branch of a parallel: step this line runs, nil for
	// the sequence's own.
	branch *branchRun
	// caseTags are the tags of the group this line is in, as -m matches
	// them; nil outside any (see enterCase). Each branch has its own: a
	// group takes the tags of the groups around it in its branch.
	caseTags []string
}

// shared is what every line of execution of a run shares: the sequence
// and its bench, the consoles, the clock, the event sink and the result.
// mu guards what the lines write during the steps (the result, the
// events and their index, the transcripts, the attempts counted).
type shared struct {
	seq   *steps.Sequence
	bench Bench
	opts  Options
	// start is the run's one clock: every line's offsets count from it.
	start time.Time

	mu   sync.Mutex
	sink Sink
	// idler is sink when it is an Idler, else nil (see withIdle).
	idler Idler
	index int
	res   *SequenceResult
	// finallyErr is the first error of a finally step, with the step
	// named: after an interrupt it is told after the interrupt, never as
	// the sequence's cause.
	finallyErr string
	consol     map[string]Console
	probes     map[string]Debugger
	trans      map[string]*transcript
	cleanup    []func()
	// release holds what Bench.Prepare returned, run last.
	release []func()
	// closed names the devices and probes that did not open.
	closed map[string]bool
	// executed counts the steps run, for Options.MaxSteps.
	executed atomic.Uint64
	// logLoss holds what the consoles' logs lost, found as they close;
	// sendLoss what they discarded of the run's sends as they closed.
	logLoss  []error
	sendLoss []error
	// environ is env in expressions, made once (see exprEnviron).
	environ     map[string]string
	environOnce sync.Once
	// flaky says a sequence or group passed after an attempt that did
	// not.
	flaky bool
	// prompts are the devices' prompts without references, compiled
	// once (see staticPrompt).
	promptMu sync.Mutex
	prompts  map[string]*promptSet
}

func newRun(seq *steps.Sequence, bench Bench, opts Options) *run {
	if opts.TranscriptLimit <= 0 {
		opts.TranscriptLimit = 256 << 10
	}
	sink := opts.Sink
	if sink == nil {
		sink = SinkFunc(func(Event) {})
	}
	r := &run{
		shared: &shared{
			seq: seq, bench: bench, opts: opts, sink: sink,
			consol: map[string]Console{},
			probes: map[string]Debugger{},
			trans:  map[string]*transcript{},
		},
		cursor:  map[string]int64{},
		sent:    map[string]SendMark{},
		vars:    map[string]any{},
		stepRes: map[string]any{},
	}
	r.idler, _ = sink.(Idler)
	for _, v := range seq.Vars {
		r.vars[v.Name] = v.Value
	}
	for k, v := range opts.Vars {
		r.vars[k] = v
	}
	return r
}

func (r *run) emit(e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.emitLocked(e)
}

// emitLocked is emit with r.mu held.
func (r *run) emitLocked(e Event) {
	now := time.Now()
	e.Time = now
	e.Offset = now.Sub(r.start)
	e.Sequence = r.seq.Name
	e.File = r.seq.File
	r.sink.Event(r.redactEvent(e))
}

func (r *run) run(ctx context.Context) *SequenceResult {
	r.start = time.Now()
	r.res = &SequenceResult{Name: r.seq.Name, File: r.seq.File, StartedAt: r.start, Status: Passed, StepsWritten: steps.Written(r.seq), Tags: r.seq.Tags}
	r.emit(Event{Type: SequenceStarted})
	if r.seq.Skip != "" {
		return r.skipped()
	}
	defer func() {
		for _, f := range r.release {
			f()
		}
	}()

	runCtx, cancel := context.WithCancelCause(r.withIdle(ctx))
	defer cancel(nil)
	if r.seq.Timeout > 0 {
		var cancelT context.CancelFunc
		runCtx, cancelT = context.WithTimeoutCause(runCtx, r.seq.Timeout, fmt.Errorf("%w after %s", ErrSequenceTimeout, r.seq.Timeout))
		defer cancelT()
	}
	openErr := r.prepare(runCtx)
	if openErr == nil {
		openErr = r.openConsoles(runCtx, cancel)
	}
	defer r.closeConsoles()
	defer r.endTimed()

	if openErr != nil {
		r.res.Status = Errored
		r.res.Error = openErr.Error()
		if ctx.Err() != nil {
			r.res.Status = Interrupted
		}
		r.setupFailed(openErr)
		r.skip(r.seq.Steps, 0, "", "")
	} else {
		r.runSequenceSteps(runCtx)
		// A fail_on match or the sequence's timeout that came between
		// steps, or while a step that went on to pass ran: the run did
		// not pass.
		if r.res.Status == Passed && runCtx.Err() != nil && ctx.Err() == nil {
			r.res.Status = Failed
			r.res.Error = context.Cause(runCtx).Error()
		}
	}

	if len(r.seq.Finally) > 0 {
		fctx := r.opts.FinallyContext
		if fctx == nil {
			fctx = context.WithoutCancel(ctx)
		}
		fctx = r.withIdle(fctx)
		saved, savedErr := r.res.Status, r.res.Error
		r.res.Status, r.res.Error = Passed, ""
		r.stepsFinally(fctx)
		finStatus := r.res.Status
		r.res.Status = worst(saved, finStatus)
		if r.res.Error != "" && savedErr == "" && ctx.Err() == nil {
			savedErr = r.res.Error
		}
		r.res.Error = savedErr
	}

	if ctx.Err() != nil && r.res.Status != Errored {
		r.res.Status = Interrupted
		if r.res.Error == "" {
			r.res.Error = "interrupted"
		}
	}
	// After an interrupt, the interrupt stays the cause: a finally step's
	// error is told as what came after it.
	if ctx.Err() != nil && r.finallyErr != "" {
		r.res.Error += "; after the interrupt, " + r.finallyErr
	}
	r.res.Duration = time.Since(r.start)
	r.res.Flaky = r.flaky && r.res.Status == Passed
	r.closeConsoles()
	r.reportLogLoss()
	r.res.Transcripts = r.transcripts()
	r.redactResult(r.res)
	r.emit(Event{Type: SequenceFinished, Result: r.res})
	return r.res
}

// skipped reports a sequence that does not run (Sequence.Skip): every
// step skipped with the reason, and nothing opened.
func (r *run) skipped() *SequenceResult {
	r.skipAs(r.seq.Steps, 0, "", "", r.seq.Skip)
	r.skipAs(r.seq.Finally, 0, "finally.", "", r.seq.Skip)
	r.res.Status = Skipped
	r.res.Error = ""
	r.res.Duration = time.Since(r.start)
	r.emit(Event{Type: SequenceFinished, Result: r.res})
	return r.res
}

func (r *run) stepsFinally(ctx context.Context) {
	r.executed.Store(0)
	for i, s := range r.seq.Finally {
		r.step(ctx, s, "finally."+strconv.Itoa(i), "")
	}
}

// worst orders outcomes: interrupted and error outrank failed, failed
// outranks passed.
func worst(a, b Status) Status {
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// rank orders a status for worst.
func rank(s Status) int {
	switch s {
	case Failed:
		return 1
	case Errored:
		return 2
	case Interrupted:
		return 3
	}
	return 0
}

// prepare runs Bench.Prepare and has its release run when run returns,
// after the consoles and probes are closed (the defers run in reverse).
func (r *run) prepare(ctx context.Context) error {
	if r.bench.Prepare == nil {
		return nil
	}
	bound, release, err := r.bench.Prepare(ctx, r.seq)
	if release != nil {
		r.release = append(r.release, release)
	}
	if err != nil {
		return err
	}
	if bound != nil {
		r.seq = bound
	}
	return nil
}

// Package runner executes hilrun sequences: it opens the consoles a sequence
// names, runs its steps with measured timing, keeps variables and results,
// and reports everything as a stream of events.
package runner

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

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
	// still run.
	MaxSteps uint64
	// KeepSteps keeps every step's result in SequenceResult.Steps. Leave it
	// off for runs of any length: memory then stays flat, and the steps
	// reach reports only through the Sink (see package results). It suits
	// short runs that read the results directly, such as the REPL's.
	KeepSteps bool
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

type run struct {
	seq   *steps.Sequence
	bench Bench
	opts  Options
	start time.Time

	mu    sync.Mutex // serializes events
	sink  Sink
	index int
	res   *SequenceResult
	// finallyErr is the first error of a finally step, with the step
	// named: after an interrupt it is told after the interrupt, never as
	// the sequence's cause.
	finallyErr string
	consol     map[string]Console
	probes     map[string]Debugger
	cursor     map[string]int64
	// sent holds, per device, where the reply to the previous send began
	// (see waitPrompt); a device without an entry has had no send yet.
	sent    map[string]SendMark
	vars    map[string]any
	stepRes map[string]any
	environ map[string]string // env in expressions; see exprEnviron
	trans   map[string]*transcript
	cleanup []func()
	// release holds what Bench.Prepare returned, run last.
	release []func()
	// closed names the devices and probes that did not open.
	closed map[string]bool
	// executed counts the steps run, for Options.MaxSteps.
	executed uint64
	// logLoss holds what the consoles' logs lost, found as they close.
	logLoss []error
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
}

// transcript keeps the last limit bytes a console printed, in a ring that
// never holds more, nor allocates more: its memory is bounded by limit
// however long the console prints.
type transcript struct {
	limit   int
	buf     []byte // the bytes in order until full, then a ring
	start   int    // once full, where the oldest byte is
	dropped int64
}

func (t *transcript) write(p []byte) {
	if n := min(len(p), t.limit-len(t.buf)); n > 0 {
		if len(t.buf)+n > cap(t.buf) {
			// Grow by doubling, as append would, but never past the
			// limit: append's own growth leaves capacity the ring never
			// uses (a 1 MiB ring ended up with 1.2 MB).
			grown := make([]byte, len(t.buf), min(max(2*cap(t.buf), len(t.buf)+n), t.limit))
			copy(grown, t.buf)
			t.buf = grown
		}
		t.buf = append(t.buf, p[:n]...)
		p = p[n:]
	}
	if len(p) == 0 {
		return
	}
	// Full: each new byte drops the oldest.
	t.dropped += int64(len(p))
	if len(p) >= t.limit {
		copy(t.buf, p[len(p)-t.limit:])
		t.start = 0
		return
	}
	n := copy(t.buf[t.start:], p)
	copy(t.buf, p[n:])
	t.start = (t.start + len(p)) % t.limit
}

// bytes returns a copy of what the transcript holds, oldest first.
func (t *transcript) bytes() []byte {
	out := make([]byte, 0, len(t.buf))
	return append(append(out, t.buf[t.start:]...), t.buf[:t.start]...)
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
		seq: seq, bench: bench, opts: opts, sink: sink,
		consol:  map[string]Console{},
		probes:  map[string]Debugger{},
		cursor:  map[string]int64{},
		sent:    map[string]SendMark{},
		vars:    map[string]any{},
		stepRes: map[string]any{},
		trans:   map[string]*transcript{},
	}
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
	e.Time = time.Now()
	e.Offset = time.Since(r.start)
	e.Sequence = r.seq.Name
	e.File = r.seq.File
	r.sink.Event(e)
}

func (r *run) run(ctx context.Context) *SequenceResult {
	r.start = time.Now()
	r.res = &SequenceResult{Name: r.seq.Name, File: r.seq.File, StartedAt: r.start, Status: Passed, StepsWritten: steps.Written(r.seq)}
	r.emit(Event{Type: SequenceStarted})
	defer func() {
		for _, f := range r.release {
			f()
		}
	}()

	runCtx, cancel := context.WithCancelCause(ctx)
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
		r.steps(runCtx, r.seq.Steps, "", "")
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
	r.closeConsoles()
	r.reportLogLoss()
	r.res.Transcripts = r.transcripts()
	r.emit(Event{Type: SequenceFinished, Result: r.res})
	return r.res
}

func (r *run) stepsFinally(ctx context.Context) {
	r.executed = 0
	for i, s := range r.seq.Finally {
		r.step(ctx, s, "finally."+strconv.Itoa(i), "")
	}
}

// worst orders outcomes: interrupted and error outrank failed, failed
// outranks passed.
func worst(a, b Status) Status {
	rank := map[Status]int{Passed: 0, Skipped: 0, Failed: 1, Errored: 2, Interrupted: 3}
	if rank[b] > rank[a] {
		return b
	}
	return a
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

func (r *run) openConsoles(ctx context.Context, cancel context.CancelCauseFunc) error {
	var patterns []stream.Pattern
	for _, p := range r.seq.FailOn {
		pat, err := p.Compile(r.lookup)
		if err != nil {
			return fmt.Errorf("%s: fail_on: %w", p.Pos, err)
		}
		patterns = append(patterns, pat)
	}
	for _, dev := range r.seq.Devices {
		if r.bench.Open == nil {
			return fmt.Errorf("device %s: no way to open serial consoles was given", dev.Name)
		}
		c, err := r.bench.Open(ctx, dev)
		if err != nil {
			r.notOpened(dev.Name)
			return &OpenError{Device: dev.Name, Port: dev.Port, From: portFrom(dev), Err: err}
		}
		r.consol[dev.Name] = c
		r.cursor[dev.Name] = c.Cursor()
		if o, ok := c.(OpenedConsole); ok {
			r.cursor[dev.Name] = o.OpenedAt()
		}
		name := dev.Name
		t := &transcript{limit: r.opts.TranscriptLimit}
		r.trans[name] = t
		remove := c.OnReceive(func(at time.Time, off int64, p []byte) {
			r.mu.Lock()
			t.write(p)
			r.mu.Unlock()
			// p is the console's read buffer: no copy for every chunk
			// of a bulk stream; sinks copy what they keep (see Event).
			r.emit(Event{Type: ConsoleOutput, Console: name, Data: p})
		})
		r.cleanup = append(r.cleanup, remove)
		r.watchConnection(name, c)
		if len(patterns) > 0 {
			// A fail_on hit on any console ends the current step at once,
			// even a delay, and with it the run.
			stop := c.Watch(patterns, func(h stream.Hit) {
				cancel(&failOnHit{console: name, hit: &stream.FailOnError{Pattern: h.Pattern, Offset: h.Offset, Line: h.Line}})
			})
			r.cleanup = append(r.cleanup, stop)
		}
		if r.bench.LogPaths != nil {
			if p := r.bench.LogPaths(c); p != "" {
				if r.res.Logs == nil {
					r.res.Logs = map[string]string{}
				}
				r.res.Logs[name] = p
			}
		}
	}
	for _, p := range r.seq.Probes {
		if r.bench.OpenProbe == nil {
			return fmt.Errorf("probe %s: no way to open debug probes was given", p.Name)
		}
		d, err := r.bench.OpenProbe(ctx, p)
		if err != nil {
			r.notOpened(p.Name)
			return &OpenError{Probe: p.Name, Err: err}
		}
		r.probes[p.Name] = d
	}
	return nil
}

func (r *run) closeConsoles() {
	for _, f := range r.cleanup {
		f()
	}
	r.cleanup = nil
	names := make([]string, 0, len(r.consol))
	for name := range r.consol {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := r.consol[name]
		c.Close()
		if err := logErr(c); err != nil {
			r.logLoss = append(r.logLoss, fmt.Errorf("console %s: %w", name, err))
		}
		delete(r.consol, name)
	}
	for name, d := range r.probes {
		d.Close()
		if l, ok := d.(interface{ LogErr() error }); ok {
			if err := l.LogErr(); err != nil {
				r.logLoss = append(r.logLoss, fmt.Errorf("probe %s: %w", name, err))
			}
		}
		delete(r.probes, name)
	}
}

// awayErr asks a console (or the one it wraps) whether its device is
// away, disconnected and awaited with reconnect: true; serialx.Console
// says, through Disconnected. An expect that times out then is a bench
// error, not the device's answer.
func awayErr(c Console) error {
	for {
		if d, ok := c.(interface{ Disconnected() error }); ok {
			return d.Disconnected()
		}
		u, ok := c.(interface{ Unwrap() Console })
		if !ok {
			return nil
		}
		c = u.Unwrap()
	}
}

// logErr asks a console (or the one it wraps) what its log files lost;
// serialx.Console says, through LogErr.
func logErr(c Console) error {
	for {
		if l, ok := c.(interface{ LogErr() error }); ok {
			return l.LogErr()
		}
		u, ok := c.(interface{ Unwrap() Console })
		if !ok {
			return nil
		}
		c = u.Unwrap()
	}
}

// reportLogLoss makes a run whose console logs are incomplete a bench
// error, whatever its steps did: the record of the run is not whole. The
// run itself went on, so as not to leave the device half way through.
func (r *run) reportLogLoss() {
	if len(r.logLoss) == 0 {
		return
	}
	var msgs []string
	for _, err := range r.logLoss {
		msgs = append(msgs, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	msg := strings.Join(msgs, "; ") + "; the run went on regardless, but its record is incomplete"
	r.res.Status = worst(r.res.Status, Errored)
	if r.res.Error == "" {
		r.res.Error = msg
	} else {
		r.res.Error += "; " + msg
	}
}

func (r *run) transcripts() []Transcript {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Transcript
	for _, dev := range r.seq.Devices {
		t := r.trans[dev.Name]
		if t == nil {
			continue
		}
		out = append(out, Transcript{Console: dev.Name, Data: t.bytes(), Truncated: t.dropped})
	}
	return out
}

// lookup resolves ${name} references.
func (r *run) lookup(name string) (any, bool) {
	if env, ok := strings.CutPrefix(name, "env."); ok {
		return r.getenv(env), true
	}
	v, ok := r.vars[name]
	return v, ok
}

// steps runs a list of steps. It returns false when the sequence must stop.
func (r *run) steps(ctx context.Context, ss []*steps.Step, prefix, group string) bool {
	for i, s := range ss {
		path := prefix + strconv.Itoa(i)
		res := r.step(ctx, s, path, group)
		if res.Status == Errored || res.Status == Interrupted ||
			(res.Status == Failed && r.seq.OnFailure == steps.Stop) || ctx.Err() != nil {
			r.skip(ss, i+1, prefix, group)
			return false
		}
	}
	return true
}

// skip reports ss[from:], which did not run, so reports list every test
// case. ss is in group; a group that did not run reports its steps first,
// as one that runs does, so the reports list the same steps however far a
// run got.
func (r *run) skip(ss []*steps.Step, from int, prefix, group string) {
	for i := from; i < len(ss); i++ {
		s := ss[i]
		path := prefix + strconv.Itoa(i)
		g := group
		if s.Kind == steps.KindGroup {
			g = joinGroup(group, s.Name)
			r.skip(s.Steps, 0, path+".", g)
		}
		res := r.newResult(s, path, g)
		// A step that did not run has no values: its name stays as
		// written.
		res.Name = writtenTitle(s)
		res.Status = Skipped
		res.Message = "not run"
		r.finish(res)
	}
}

func (r *run) newResult(s *steps.Step, path, group string) *StepResult {
	name := r.title(s)
	if s.Kind == steps.KindPower && s.Name == "" && s.Power != nil && s.Power.Target == "" {
		// The board comes from the bench the sequence is bound to.
		name = strings.TrimSpace(s.Power.Action + " " + steps.PowerTarget(r.seq, s.Power))
	}
	return &StepResult{
		Path: path, Kind: string(s.Kind), Name: name, Group: group, ID: s.ID,
		File: s.Pos.File, Line: s.Pos.Line, Column: s.Pos.Col,
		Started: time.Since(r.start),
	}
}

func (r *run) finish(res *StepResult) {
	r.mu.Lock()
	res.Index = r.index
	r.index++
	r.mu.Unlock()
	if r.opts.KeepSteps {
		r.res.Steps = append(r.res.Steps, *res)
	}
	if res.Status != Skipped {
		r.res.Status = worst(r.res.Status, res.Status)
		if n := len(r.open); n > 0 {
			r.open[n-1] = worst(r.open[n-1], res.Status)
		}
	}
	cp := *res
	r.emit(Event{Type: StepFinished, Step: &cp})
}

// step runs one step and records its result.
func (r *run) step(ctx context.Context, s *steps.Step, path, group string) *StepResult {
	if s.Kind == steps.KindGroup {
		group = joinGroup(group, s.Name)
	}
	if s.Kind != steps.KindSend {
		r.endTimed() // only a send writes on the thread a wait ended on
	}
	wrote := r.wrote
	r.wrote = time.Time{}
	if s.Kind == steps.KindDelay {
		r.wrote = wrote
	}
	res := r.newResult(s, path, group)
	if name := r.unopened(s); name != "" {
		// A finally step for a device that never opened: the open error
		// is the run's error, and this step could not have run.
		res.Status = Skipped
		res.Message = "not run: " + name + " did not open"
		r.finish(res)
		return res
	}
	started := time.Now()
	cp := *res
	cp.Timeout = r.shownTimeout(s)
	r.emit(Event{Type: StepStarted, Step: &cp})

	var err error
	switch s.Kind {
	case steps.KindGroup:
		r.open = append(r.open, Passed)
		r.steps(ctx, s.Steps, path+".", group)
		res.Status = r.closeContainer()
	case steps.KindRepeat:
		r.open = append(r.open, Passed)
		err = r.repeat(ctx, s, res, group)
		res.Status = r.closeContainer()
	default:
		if err = r.countStep(); err == nil {
			err = r.leaf(ctx, s, res)
		}
		var hit *failOnHit
		if err == nil && errors.As(context.Cause(ctx), &hit) {
			// fail_on matched while this step ran, on a console it did
			// not wait on: the step it happened in fails.
			err = context.Cause(ctx)
		}
	}
	res.Duration = time.Since(started)
	if s.Kind != steps.KindGroup {
		r.classify(ctx, res, err)
	}
	if s.ID != "" {
		r.stepRes[s.ID] = resultMap(res)
	}
	r.finish(res)
	return res
}

// closeContainer ends the innermost group or repeat being run and returns
// the worst status of the steps it held, Passed when none ran.
func (r *run) closeContainer() Status {
	n := len(r.open)
	st := r.open[n-1]
	r.open = r.open[:n-1]
	return st
}

func resultMap(res *StepResult) map[string]any {
	m := map[string]any{}
	for k, v := range res.Data {
		m[k] = v
	}
	for k, v := range res.Saved {
		m[k] = v
	}
	m["status"] = string(res.Status)
	m["duration_ms"] = float64(res.Duration.Microseconds()) / 1000
	m["message"] = res.Message
	return m
}

// stepError is a failure the device caused (Failed), as opposed to the
// bench (any other error is Errored).
type stepError struct {
	msg      string
	expected string
	received string
}

func (e *stepError) Error() string { return e.msg }

// classify sets the step's status from the error it ended with.
func (r *run) classify(ctx context.Context, res *StepResult, err error) {
	if res.Status == Failed || res.Status == Errored {
		return
	}
	if err == nil {
		if res.Status == "" {
			res.Status = Passed
		}
		return
	}
	var se *stepError
	var fe *stream.FailOnError
	var hit *failOnHit
	switch {
	case errors.As(err, &hit):
		res.Status = Failed
		res.Message = hit.Error()
		if c := r.consol[hit.console]; c != nil {
			res.Received = excerpt(c, hit.hit.Offset)
		}
	case errors.As(err, &se):
		res.Status = Failed
		res.Message = se.msg
		res.Expected = se.expected
		res.Received = se.received
	case errors.As(err, &fe):
		res.Status = Failed
		res.Message = fe.Error()
	case errors.Is(err, ErrSequenceTimeout):
		res.Status = Failed
		res.Message = err.Error()
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled) && errors.Is(err, context.Canceled):
		res.Status = Interrupted
		res.Message = "interrupted"
	default:
		res.Status = Errored
		res.Message = err.Error()
	}
	if res.Status == Failed && r.res.Error == "" && errors.Is(err, ErrSequenceTimeout) {
		r.res.Error = err.Error()
	}
	if res.Status == Errored && r.res.Error == "" {
		r.res.Error = res.Message
	}
	if res.Status == Errored && r.finallyErr == "" && strings.HasPrefix(res.Path, "finally.") {
		r.finallyErr = fmt.Sprintf("finally step %s %s error: %s", res.Path, res.Kind, res.Message)
	}
}

package runner_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// device is a small line-oriented device model over a stream.Buffer: each
// line written to it gets the reply its handler gives, after latency. It
// stands in for a serial console in fast unit tests; the pty tests in
// internal/cli run the real thing.
type device struct {
	buf     *stream.Buffer
	handle  func(line string) string
	latency time.Duration

	rmu     sync.Mutex // guards receive; Write prints while holding mu
	receive []func(time.Time, int64, []byte)

	mu      sync.Mutex
	partial string
	writes  []string
	closed  bool
	failErr error
}

var _ runner.Console = (*device)(nil)

func newDevice(handle func(string) string) *device {
	return &device{buf: stream.NewBuffer(0), handle: handle}
}

func (d *device) print(s string) {
	d.rmu.Lock()
	fns := d.receive
	d.rmu.Unlock()
	off := d.buf.End()
	for _, fn := range fns {
		fn(time.Now(), off, []byte(s))
	}
	d.buf.Append(time.Now(), []byte(s))
}

func (d *device) Write(ctx context.Context, p []byte) (int64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.failErr != nil {
		return 0, d.failErr
	}
	cursor := d.buf.End()
	d.writes = append(d.writes, string(p))
	d.partial += string(p)
	for {
		i := strings.IndexAny(d.partial, "\r\n")
		if i < 0 {
			break
		}
		line := d.partial[:i]
		d.partial = strings.TrimLeft(d.partial[i:], "\r\n")
		reply := d.handle(line)
		if d.latency > 0 {
			go func() { time.Sleep(d.latency); d.print(reply) }()
		} else {
			d.print(reply)
		}
	}
	return cursor, nil
}

func (d *device) Expect(ctx context.Context, from int64, want, failOn []stream.Pattern) (stream.Match, error) {
	return d.buf.Expect(ctx, from, want, failOn)
}

func (d *device) Capture(ctx context.Context, from int64, opt stream.CaptureOptions) (stream.Capture, error) {
	return d.buf.Capture(ctx, from, opt)
}

func (d *device) Cursor() int64                                        { return d.buf.End() }
func (d *device) Tail(lines, maxBytes int) []byte                      { return d.buf.Tail(lines, maxBytes) }
func (d *device) Watch(p []stream.Pattern, fn func(stream.Hit)) func() { return d.buf.Watch(p, fn) }
func (d *device) OnReceive(fn func(time.Time, int64, []byte)) func() {
	d.rmu.Lock()
	d.receive = append(d.receive, fn)
	d.rmu.Unlock()
	return func() {}
}

func (d *device) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = true
	return nil
}

// shell answers like a small firmware console.
func shell(line string) string {
	switch {
	case line == "version":
		return "fw v2.7\r\nsim> "
	case strings.HasPrefix(line, "echo "):
		return strings.TrimPrefix(line, "echo ") + "\r\nsim> "
	case line == "panic":
		return "Guru Meditation Error: Core 0 panic'ed\r\n"
	case line == "slow":
		return ""
	case line == "count":
		return "count=42\r\nsim> "
	}
	return "unknown command\r\nsim> "
}

func load(t *testing.T, src string) *steps.Sequence {
	t.Helper()
	seq, err := steps.Parse("test.yaml", []byte(src), steps.LoadOptions{})
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return seq
}

type recorder struct {
	mu     sync.Mutex
	events []runner.Event
}

func (r *recorder) Event(e runner.Event) {
	e.Data = bytes.Clone(e.Data) // valid only during the call
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) types() []runner.EventType {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []runner.EventType
	for _, e := range r.events {
		if e.Type != runner.ConsoleOutput && e.Type != runner.ConsoleInput {
			out = append(out, e.Type)
		}
	}
	return out
}

func run(t *testing.T, ctx context.Context, seq *steps.Sequence, dev *device, sink runner.Sink) *runner.SequenceResult {
	t.Helper()
	return runner.Run(ctx, seq, runner.Bench{
		Open: func(ctx context.Context, d *steps.Device) (runner.Console, error) { return dev, nil },
	}, runner.Options{
		KeepSteps: true,
		Sink:      sink,
	})
}

func statuses(res *runner.SequenceResult) string {
	var s []string
	for _, st := range res.Steps {
		s = append(s, st.Path+":"+string(st.Status))
	}
	return strings.Join(s, " ")
}

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		status   runner.Status
		steps    string // path:status of every reported step, in order
		message  string // substring of the first failed step's message
		vars     map[string]any
		setup    func(d *device)
		received string
	}{
		{
			name: "send and expect",
			src: `
steps:
  - send: version
    expect: "fw v"
  - send: echo hi
    expect: hi`,
			status: runner.Passed,
			steps:  "0:passed 1:passed",
		},
		{
			name: "a reply printed before the send does not match",
			src: `
steps:
  - send: echo x
    expect: "fw v"
    timeout: 100ms`,
			setup:    func(d *device) { d.print("fw v1.0 old output\r\n") },
			status:   runner.Failed,
			steps:    "0:failed",
			message:  `timed out after 100ms waiting for "fw v"; last received: "sim> "`,
			received: "fw v1.0 old output",
		},
		{
			name: "a standalone expect continues after the previous match",
			src: `
steps:
  - send: echo a-b-a
    expect: a
  - expect: a
  - expect: a
    timeout: 50ms`,
			status:  runner.Failed,
			steps:   "0:passed 1:passed 2:failed",
			message: "timed out after 50ms",
		},
		{
			name: "regex groups saved and asserted",
			src: `
steps:
  - send: version
    expect: 'v(\d+)\.(?P<minor>\d+)'
    regex: true
    save: major
  - assert: num(major) == 2 && minor == "7"`,
			status: runner.Passed,
			steps:  "0:passed 1:passed",
			vars:   map[string]any{"major": "2", "minor": "7"},
		},
		{
			name: "a false assert shows the values it read",
			src: `
steps:
  - send: count
    expect: 'count=(\d+)'
    regex: true
    save: n
  - assert: num(n) > 100
    message: "counter too low: ${n}"`,
			status:  runner.Failed,
			steps:   "0:passed 1:failed",
			message: `counter too low: 42 (num(n) > 100) with n="42"`,
		},
		{
			name: "any of several patterns",
			src: `
steps:
  - send: bogus
    expect: {any: [OK, unknown command]}
    save: what`,
			status: runner.Passed,
			steps:  "0:passed",
			vars:   map[string]any{"what": "unknown command"},
		},
		{
			name: "stop skips the rest",
			src: `
steps:
  - send: slow
    expect: never
    timeout: 20ms
  - send: version
  - group: later
    steps:
      - send: version`,
			status: runner.Failed,
			steps:  "0:failed 1:skipped 2.0:skipped 2:skipped",
		},
		{
			name: "continue runs the rest",
			src: `
on_failure: continue
steps:
  - send: slow
    expect: never
    timeout: 20ms
  - send: version
    expect: fw`,
			status: runner.Failed,
			steps:  "0:failed 1:passed",
		},
		{
			name: "fail_on while an expect waits",
			src: `
fail_on: ["Guru Meditation"]
steps:
  - send: panic
    expect: never
    timeout: 5s`,
			status:  runner.Failed,
			steps:   "0:failed",
			message: `Guru Meditation`,
		},
		{
			name: "per-step fail_on",
			src: `
steps:
  - send: echo FATAL now
    expect: sim>
    fail_on: FATAL`,
			status:  runner.Failed,
			steps:   "0:failed",
			message: "FATAL",
		},
		{
			name: "set with expressions and templates",
			src: `
vars: {base: 40}
steps:
  - set: {n: {expr: "base + 2"}, label: "run-${base}"}
  - assert: n == 42 && label == "run-40"`,
			status: runner.Passed,
			steps:  "0:passed 1:passed",
			vars:   map[string]any{"n": 42, "label": "run-40"},
		},
		{
			name: "repeat with a loop variable",
			src: `
steps:
  - repeat: {count: 3, as: i}
    steps:
      - send: "echo item${i}"
        expect: "item${i}"`,
			status: runner.Passed,
			steps:  "0#0.0:passed 0#1.0:passed 0#2.0:passed 0:passed",
		},
		{
			name: "named groups",
			src: `
steps:
  - group: boot
    steps:
      - send: version
        expect: fw
  - group: shell
    steps:
      - send: echo x
        expect: x`,
			status: runner.Passed,
			steps:  "0.0:passed 0:passed 1.0:passed 1:passed",
		},
		{
			name: "step results are readable by id",
			src: `
steps:
  - send: version
    expect: 'v(\d+)'
    regex: true
    id: ver
  - assert: steps.ver.status == "passed" && steps.ver.match == "v2"`,
			status: runner.Passed,
			steps:  "0:passed 1:passed",
		},
		{
			name: "a console error is a bench error",
			src: `
steps:
  - send: version`,
			setup:   func(d *device) { d.failErr = errors.New("/dev/ttyUSB0: device disconnected") },
			status:  runner.Errored,
			steps:   "0:errored",
			message: "device disconnected",
		},
		{
			name: "sequence timeout",
			src: `
timeout: 50ms
steps:
  - send: slow
    expect: never
    timeout: 5s
  - send: version`,
			status:  runner.Failed,
			steps:   "0:failed 1:skipped",
			message: "sequence timeout after 50ms",
		},
		{
			name: "capture until a pattern",
			src: `
steps:
  - send: echo one two three
  - capture: {until: three, duration: 2s}
    save: out
  - assert: out contains "two"`,
			status: runner.Passed,
			steps:  "0:passed 1:passed 2:passed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq := load(t, tt.src)
			dev := newDevice(shell)
			if tt.setup != nil {
				tt.setup(dev)
			}
			res := run(t, context.Background(), seq, dev, nil)
			want := strings.ReplaceAll(tt.steps, "errored", "error")
			if got := statuses(res); got != want {
				t.Errorf("steps = %q, want %q", got, want)
			}
			if res.Status != tt.status {
				t.Errorf("status = %s, want %s (error %q)", res.Status, tt.status, res.Error)
			}
			if tt.message != "" {
				found := false
				for _, s := range res.Steps {
					if s.Status == runner.Failed || s.Status == runner.Errored {
						if !strings.Contains(s.Message, tt.message) {
							t.Errorf("message = %q, want it to contain %q", s.Message, tt.message)
						}
						if tt.received != "" && !strings.Contains(s.Received, tt.received) {
							t.Errorf("received = %q, want it to contain %q", s.Received, tt.received)
						}
						found = true
						break
					}
				}
				if !found {
					t.Errorf("no failed step carries %q", tt.message)
				}
			}
			for k, v := range tt.vars {
				got := savedVar(res, k)
				if fmt.Sprint(got) != fmt.Sprint(v) {
					t.Errorf("var %s = %v, want %v", k, got, v)
				}
			}
			if len(seq.Devices) > 0 && !dev.closed {
				t.Error("the console was not closed")
			}
		})
	}
}

func savedVar(res *runner.SequenceResult, name string) any {
	var v any
	for _, s := range res.Steps {
		if x, ok := s.Saved[name]; ok {
			v = x
		}
	}
	return v
}

func TestFailOnDuringDelayEndsAtOnce(t *testing.T) {
	seq := load(t, `
fail_on: [HardFault]
steps:
  - delay: 120s
  - send: version
finally:
  - send: echo cleanup`)
	dev := newDevice(shell)
	go func() {
		time.Sleep(20 * time.Millisecond)
		dev.print("*** HardFault at 0x0800abcd\r\n")
	}()
	began := time.Now()
	res := run(t, context.Background(), seq, dev, nil)
	if res.Status != runner.Failed {
		t.Fatalf("status = %s, want failed", res.Status)
	}
	if time.Since(began) > 60*time.Second {
		t.Errorf("the delay ran on after the fail_on pattern appeared")
	}
	if !strings.Contains(res.Steps[0].Message, "HardFault") {
		t.Errorf("message = %q", res.Steps[0].Message)
	}
	if got := statuses(res); got != "0:failed 1:skipped finally.0:passed" {
		t.Errorf("steps = %s", got)
	}
}

func TestInterruptRunsFinally(t *testing.T) {
	seq := load(t, `
steps:
  - send: slow
    expect: never
    timeout: 30s
finally:
  - send: echo cleanup
    expect: cleanup`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The interrupt comes once the step is under way: it has sent.
	dev := newDevice(func(line string) string {
		if line == "slow" {
			cancel()
		}
		return shell(line)
	})
	rec := &recorder{}
	res := run(t, ctx, seq, dev, rec)
	if res.Status != runner.Interrupted {
		t.Errorf("status = %s, want interrupted", res.Status)
	}
	if got := statuses(res); got != "0:interrupted finally.0:passed" {
		t.Errorf("steps = %s", got)
	}
	if dev.writes[len(dev.writes)-1] != "echo cleanup\n" {
		t.Errorf("finally did not send: %q", dev.writes)
	}
	types := rec.types()
	if types[0] != runner.SequenceStarted || types[len(types)-1] != runner.SequenceFinished {
		t.Errorf("events = %v", types)
	}
}

// TestInterruptStaysTheCause: a finally step that errors after Ctrl-C does
// not become the sequence's error; the interrupt stays the cause, and the
// finally step's error is told as what came after it.
func TestInterruptStaysTheCause(t *testing.T) {
	seq := load(t, `
steps:
  - send: slow
    expect: never
    timeout: 30s
finally:
  - send: echo cleanup`)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var dev *device
	dev = newDevice(func(line string) string {
		if line == "slow" {
			cancel()
			dev.failErr = errors.New("/dev/ttyUSB0: input/output error") // Write holds dev.mu
		}
		return shell(line)
	})
	res := run(t, ctx, seq, dev, nil)
	if res.Status != runner.Interrupted {
		t.Errorf("status = %s, want interrupted", res.Status)
	}
	if got := statuses(res); got != "0:interrupted finally.0:error" {
		t.Errorf("steps = %s", got)
	}
	want := "interrupted; after the interrupt, finally step finally.0 send error: send to console: /dev/ttyUSB0: input/output error"
	if res.Error != want {
		t.Errorf("error = %q, want %q", res.Error, want)
	}
}

func TestRepeatEveryKeepsAbsoluteDeadlines(t *testing.T) {
	seq := load(t, `
steps:
  - repeat: {count: 5, every: 100ms}
    steps:
      - send: echo tick
      - delay: 50ms`)
	dev := newDevice(shell)
	res := run(t, context.Background(), seq, dev, nil)
	if res.Status != runner.Passed {
		t.Fatalf("status %s: %s", res.Status, statuses(res))
	}
	var starts []time.Duration
	for _, s := range res.Steps {
		if s.Kind == "send" {
			starts = append(starts, s.Started)
		}
	}
	if len(starts) != 5 {
		t.Fatalf("%d iterations, want 5", len(starts))
	}
	// Iteration i starts i periods after the first, never sooner, however
	// long each took. A drifting schedule would also add the delay every
	// time, so that iteration i starts at least i delays late; a loaded
	// machine makes some iterations late, but not every one by that much.
	drifts := true
	for i := 1; i < len(starts); i++ {
		late := starts[i] - starts[0] - time.Duration(i)*100*time.Millisecond
		if late < -5*time.Millisecond { // the first iteration's own start may lag the schedule a little
			t.Errorf("iteration %d started %s early", i, -late)
		}
		if late < time.Duration(i)*50*time.Millisecond {
			drifts = false
		}
	}
	if drifts {
		t.Errorf("each iteration started a delay later than the one before: %s", starts)
	}
	last := res.Steps[len(res.Steps)-1]
	if last.Kind != "repeat" || last.Data["iterations"] != 5 {
		t.Errorf("repeat result = %+v", last)
	}
}

func TestUndefinedAtRunTimeFailsTheStep(t *testing.T) {
	// A variable that only a step which did not match would have saved.
	seq := load(t, `
on_failure: continue
steps:
  - send: slow
    expect: 'v(\d+)'
    regex: true
    save: v
    timeout: 10ms
  - send: "echo ${v}"`)
	res := run(t, context.Background(), seq, newDevice(shell), nil)
	if got := statuses(res); got != "0:failed 1:failed" {
		t.Fatalf("steps = %s", got)
	}
	if !strings.Contains(res.Steps[1].Message, `"v" is not defined`) {
		t.Errorf("message = %q", res.Steps[1].Message)
	}
}

func TestOpenErrorIsBenchError(t *testing.T) {
	seq := load(t, `
steps:
  - send: version
finally:
  - delay: 1ms`)
	res := runner.Run(context.Background(), seq, runner.Bench{
		Open: func(ctx context.Context, d *steps.Device) (runner.Console, error) {
			return nil, errors.New("open /dev/ttyUSB9: no such file or directory")
		},
	}, runner.Options{
		KeepSteps: true,
	})
	if res.Status != runner.Errored || !strings.Contains(res.Error, "device console: open /dev/ttyUSB9") {
		t.Errorf("status %s error %q", res.Status, res.Error)
	}
	if got := statuses(res); got != "0:skipped finally.0:passed" {
		t.Errorf("steps = %s", got)
	}
}

func TestTranscriptKeepsTheTail(t *testing.T) {
	seq := load(t, `
steps:
  - send: echo start
    expect: start
  - expect: the end
`)
	dev := newDevice(shell)
	go func() {
		time.Sleep(10 * time.Millisecond)
		for i := 0; i < 100; i++ {
			dev.print(fmt.Sprintf("line %03d of output\r\n", i))
		}
		dev.print("the end\r\n")
	}()
	res := runner.Run(context.Background(), seq, runner.Bench{
		Open: func(ctx context.Context, d *steps.Device) (runner.Console, error) { return dev, nil },
	}, runner.Options{
		KeepSteps:       true,
		TranscriptLimit: 100,
	})
	if res.Status != runner.Passed {
		t.Fatalf("status %s: %s", res.Status, statuses(res))
	}
	tr := res.Transcripts[0]
	total := int64(dev.buf.End())
	if len(tr.Data) != 100 || tr.Truncated != total-100 {
		t.Errorf("transcript holds %d bytes, %d dropped; want 100 and %d", len(tr.Data), tr.Truncated, total-100)
	}
	if !strings.HasSuffix(string(tr.Data), "the end\r\n") {
		t.Errorf("transcript does not end with the last output: %q", tr.Data)
	}
}

func TestFilterResponses(t *testing.T) {
	seq := load(t, `
steps:
  - send: mixed
    expect: 'OK (\d+)'
    regex: true
    save: n
    timeout: 200ms
`)
	seq.FilterResponses = true
	dev := newDevice(func(line string) string {
		// A log line mentions OK before the response line does.
		return "[log] state OK 1\r\n> OK 2\r\n"
	})
	res := run(t, context.Background(), seq, dev, nil)
	if res.Status != runner.Passed || res.Steps[0].Saved["n"] != "2" {
		t.Errorf("status %s, saved %v: the log line matched", res.Status, res.Steps[0].Saved)
	}
}

// Every step kind the loader knows runs: containers in the runner's walk,
// the others through runner.LeafRunners.
func TestEveryKindRuns(t *testing.T) {
	for _, k := range steps.Kinds() {
		_, leaf := runner.LeafRunners()[k.Kind]
		container := k.Kind == steps.KindGroup || k.Kind == steps.KindRepeat || k.Kind == steps.KindParallel
		if leaf == container {
			t.Errorf("step kind %s: leaf runner %v, container %v: want exactly one", k.Kind, leaf, container)
		}
	}
	for k := range runner.LeafRunners() {
		if _, ok := steps.LookupKind(k); !ok {
			t.Errorf("runner.LeafRunners has %s, which steps.Kinds() does not describe", k)
		}
	}
}

// TestStepsNotKept runs nested groups and repeats without KeepSteps: the
// result holds no steps, and containers still take the worst status of the
// steps inside them, as the events show.
func TestStepsNotKept(t *testing.T) {
	seq := load(t, `on_failure: continue
steps:
  - group: outer
    steps:
      - repeat: {count: 3, as: i}
        steps:
          - group: inner
            steps:
              - assert: i != 1
      - assert: "true"
  - assert: "true"
`)
	rec := &recorder{}
	res := runner.Run(context.Background(), seq, runner.Bench{}, runner.Options{
		Sink: rec,
	})
	if res.Steps != nil {
		t.Errorf("%d steps kept without KeepSteps", len(res.Steps))
	}
	got := map[string]runner.Status{}
	for _, e := range rec.events {
		if e.Type == runner.StepFinished {
			got[e.Step.Path] = e.Step.Status
		}
	}
	want := map[string]runner.Status{
		"0.0#0.0.0": runner.Passed, "0.0#1.0.0": runner.Failed, "0.0#2.0.0": runner.Passed,
		"0.0#0.0": runner.Passed, "0.0#1.0": runner.Failed, "0.0#2.0": runner.Passed,
		"0.0": runner.Failed, "0.1": runner.Passed, "0": runner.Failed, "1": runner.Passed,
	}
	if len(got) != len(want) {
		t.Errorf("steps %v", got)
	}
	for path, st := range want {
		if got[path] != st {
			t.Errorf("step %s: %s, want %s (all: %v)", path, got[path], st, got)
		}
	}
	if res.Status != runner.Failed {
		t.Errorf("sequence %s", res.Status)
	}
}

// TestDelayAfterSendCountsFromTheWrite: a delay right after a send counts
// from the end of its write, once: a second delay in a row waits its whole
// length again, and a delay after a send that expects counts from its own
// start.
func TestDelayAfterSendCountsFromTheWrite(t *testing.T) {
	seq := load(t, `
steps:
  - send: echo a
  - delay: 40ms
  - delay: 40ms
  - send: echo b
    expect: b
  - delay: 40ms`)
	dev := newDevice(shell)
	res := run(t, context.Background(), seq, dev, nil)
	if res.Status != runner.Passed {
		t.Fatalf("status %s: %s", res.Status, statuses(res))
	}
	var delays []runner.StepResult
	for _, s := range res.Steps {
		if s.Kind == "delay" {
			delays = append(delays, s)
		}
	}
	if len(delays) != 3 {
		t.Fatalf("%d delay steps ran, want 3", len(delays))
	}
	// Each delay lasts at least its length from where it counts; the
	// second and third count from their own start, so each step lasts
	// the whole 40 ms. (A stale anchor would end the second at once.)
	for i, d := range delays[1:] {
		if d.Duration < 40*time.Millisecond {
			t.Errorf("delay %d lasted %s, want at least 40ms", i+2, d.Duration)
		}
	}
	// The first ends 40 ms after the write, which ended before it started.
	first := delays[0]
	send := res.Steps[0]
	if end := first.Started + first.Duration; end < send.Started+40*time.Millisecond {
		t.Errorf("the first delay ended %s after the send started, want at least 40ms", end-send.Started)
	}
}

// TestDelayFirstInAPeriodCountsFromThePeriod: in a repeat with every:, a
// delay that starts an iteration counts from the iteration's start, not
// from the previous iteration's last send.
func TestDelayFirstInAPeriodCountsFromThePeriod(t *testing.T) {
	seq := load(t, `
steps:
  - repeat: {count: 3, every: 60ms}
    steps:
      - delay: 30ms
      - send: echo tick`)
	dev := newDevice(shell)
	res := run(t, context.Background(), seq, dev, nil)
	if res.Status != runner.Passed {
		t.Fatalf("status %s: %s", res.Status, statuses(res))
	}
	n := 0
	for _, s := range res.Steps {
		if s.Kind == "delay" {
			n++
			if s.Duration < 30*time.Millisecond {
				t.Errorf("delay %s lasted %s, want at least 30ms", s.Path, s.Duration)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d delays ran, want 3", n)
	}
}

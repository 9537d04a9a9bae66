package runner_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// radio is two devices a and b: "tx TEXT" on one prints "rx TEXT" on the
// other, "echo TEXT" prints TEXT, and "hold" on b blocks until release is
// closed, after printing "holding" on a.
type radio struct {
	a, b    *device
	release chan struct{}
}

func newRadio() *radio {
	r := &radio{release: make(chan struct{})}
	handle := func(other func() *device) func(string) string {
		return func(line string) string {
			switch {
			case strings.HasPrefix(line, "tx "):
				go other().print("rx " + strings.TrimPrefix(line, "tx ") + "\r\n")
				return "ok\r\n"
			case strings.HasPrefix(line, "echo "):
				return strings.TrimPrefix(line, "echo ") + "\r\n"
			case line == "hold":
				r.a.print("holding\r\n")
				<-r.release
				return "held\r\n"
			}
			return "unknown\r\n"
		}
	}
	r.a = newDevice(handle(func() *device { return r.b }))
	r.b = newDevice(handle(func() *device { return r.a }))
	return r
}

func (r *radio) run(t *testing.T, ctx context.Context, src string, sink runner.Sink) *runner.SequenceResult {
	t.Helper()
	seq := load(t, "devices:\n  a: {port: /dev/a}\n  b: {port: /dev/b}\n"+src)
	return runner.Run(ctx, seq, runner.Bench{
		Open: func(ctx context.Context, d *steps.Device) (runner.Console, error) {
			if d.Name == "a" {
				return r.a, nil
			}
			return r.b, nil
		},
	}, runner.Options{KeepSteps: true, Sink: sink})
}

// byPath are the step results by path, and their paths in the order
// they finished.
func byPath(res *runner.SequenceResult) map[string]runner.StepResult {
	m := map[string]runner.StepResult{}
	for _, s := range res.Steps {
		m[s.Path] = s
	}
	return m
}

func TestParallelTxRx(t *testing.T) {
	r := newRadio()
	rec := &recorder{}
	res := r.run(t, context.Background(), `steps:
  - parallel:
      sender:
        - barrier: ready
        - send: tx hello
          to: a
          expect: ok
        - set: {sent: "hello"}
      receiver:
        - barrier: ready
        - expect: {regex: "rx (\\w+)"}
          to: b
          save: [word]
          id: got
  - send: "echo ${branches.sender.sent} ${branches.receiver.word}"
    to: a
    expect: hello hello
  - assert: steps.got.status == "passed" && branches.receiver.word == "hello"
`, rec)
	if res.Status != runner.Passed {
		t.Fatalf("status %s: %s\n%s", res.Status, res.Error, statuses(res))
	}
	steps := byPath(res)
	for path, want := range map[string]string{
		"0": "", "0.sender": "sender", "0.sender.0": "sender", "0.sender.1": "sender", "0.sender.2": "sender",
		"0.receiver": "receiver", "0.receiver.0": "receiver", "0.receiver.1": "receiver", "1": "", "2": "",
	} {
		st, ok := steps[path]
		if !ok || st.Branch != want || st.Status != runner.Passed {
			t.Errorf("step %s: %+v, want branch %q, passed", path, st, want)
		}
	}
	if st := steps["0"]; st.Kind != "parallel" || st.Index != len(res.Steps)-3 {
		t.Errorf("the parallel step finished after its branches: %+v", st)
	}
	b := steps["0.receiver.0"].Data
	if b["barrier"] != "ready" || b["crossing"] != 1 {
		t.Errorf("barrier data %v", b)
	}
	// The events come in the order of their indexes.
	last := -1
	for _, e := range rec.events {
		if e.Type == runner.StepFinished {
			if e.Step.Index != last+1 {
				t.Fatalf("step_finished with index %d after %d", e.Step.Index, last)
			}
			last = e.Step.Index
		}
	}
}

// A failing branch cancels the other at its next step; the finally steps
// of both run.
func TestParallelFailureCancels(t *testing.T) {
	r := newRadio()
	// b is held in its first step until a's failure is reported.
	var once sync.Once
	sink := runner.SinkFunc(func(e runner.Event) {
		if e.Type == runner.StepFinished && e.Step.Path == "0.a.1" && e.Step.Status == runner.Failed {
			once.Do(func() { close(r.release) })
		}
	})
	res := r.run(t, context.Background(), `steps:
  - parallel:
      a:
        steps:
          - expect: holding
            to: a
          - assert: "1 == 2"
          - send: echo never
            to: a
          - barrier: never_met
        finally:
          - send: echo a-finally
            to: a
            expect: a-finally
      b:
        steps:
          - send: hold
            to: b
            expect: held
          - send: echo after
            to: b
          - barrier: never_met
        finally:
          - send: echo b-finally
            to: b
            expect: b-finally
  - send: echo after the block
    to: a
`, sink)
	if res.Status != runner.Failed {
		t.Fatalf("status %s, want failed\n%s", res.Status, statuses(res))
	}
	want := map[string]runner.Status{
		"0.a.0": runner.Passed, "0.a.1": runner.Failed, "0.a.2": runner.Skipped, "0.a.finally.0": runner.Passed, "0.a": runner.Failed,
		"0.b.0": runner.Passed, "0.b.1": runner.Skipped, "0.b.finally.0": runner.Passed,
		"0": runner.Failed, "1": runner.Skipped,
	}
	got := byPath(res)
	for path, st := range want {
		if got[path].Status != st {
			t.Errorf("step %s: %s, want %s", path, got[path].Status, st)
		}
	}
	if m := got["0.b.1"].Message; m != "cancelled: branch a failed at step 0.a.1" {
		t.Errorf("the cancelled step says %q", m)
	}
	if m := got["0.b"].Message; m != "cancelled: branch a failed at step 0.a.1" {
		t.Errorf("the cancelled branch says %q", m)
	}
	if m := got["0"].Message; !strings.Contains(m, "branch a failed at step 0.a.1") {
		t.Errorf("the parallel step says %q", m)
	}
	if strings.Contains(strings.Join(r.b.writes, ""), "echo after") {
		t.Errorf("b ran its step after a's failure: %q", r.b.writes)
	}
}

// With on_failure: continue the other branch runs on.
func TestParallelContinue(t *testing.T) {
	r := newRadio()
	close(r.release)
	res := r.run(t, context.Background(), `steps:
  - parallel:
      a:
        - assert: "1 == 2"
        - send: echo still
          to: a
          expect: still
      b:
        - send: echo b
          to: b
          expect: b
    on_failure: continue
`, nil)
	got := byPath(res)
	if res.Status != runner.Failed || got["0.a.1"].Status != runner.Passed || got["0.b.0"].Status != runner.Passed || got["0"].Status != runner.Failed {
		t.Errorf("status %s\n%s", res.Status, statuses(res))
	}
}

// A barrier crossed in a repeat meets the other branch's crossings in
// turn; one that times out names the branch that did not come.
func TestParallelBarriers(t *testing.T) {
	r := newRadio()
	close(r.release)
	res := r.run(t, context.Background(), `steps:
  - parallel:
      a:
        - repeat: {count: 3, as: i}
          steps:
            - barrier: tick
            - send: "tx ${i}"
              to: a
              expect: ok
      b:
        - repeat: {count: 3, as: i}
          steps:
            - barrier: tick
            - expect: "rx ${i}"
              to: b
`, nil)
	if res.Status != runner.Passed {
		t.Fatalf("status %s\n%s", res.Status, statuses(res))
	}
	for _, path := range []string{"0.a.0#0.0", "0.a.0#1.0", "0.a.0#2.0", "0.b.0#2.0"} {
		if d := byPath(res)[path].Data; d["crossing"] == nil {
			t.Errorf("step %s: data %v", path, d)
		}
	}
	if d := byPath(res)["0.b.0#2.0"].Data; d["crossing"] != 3 {
		t.Errorf("third crossing: %v", d)
	}

	r = newRadio()
	var once sync.Once
	sink := runner.SinkFunc(func(e runner.Event) {
		if e.Type == runner.StepFinished && e.Step.Kind == "barrier" && e.Step.Status == runner.Failed {
			once.Do(func() { close(r.release) })
		}
	})
	res = r.run(t, context.Background(), `steps:
  - parallel:
      a:
        - barrier: sync
          timeout: 50ms
      b:
        - send: hold
          to: b
          expect: held
        - barrier: sync
`, sink)
	got := byPath(res)
	if m := got["0.a.0"].Message; got["0.a.0"].Status != runner.Failed || m != "barrier sync: timed out after 50ms waiting for branch b (arrived: a)" {
		t.Errorf("the barrier that timed out: %s %q", got["0.a.0"].Status, m)
	}
	if got["0.b.1"].Status != runner.Skipped {
		t.Errorf("b's barrier after a's failure: %s %q", got["0.b.1"].Status, got["0.b.1"].Message)
	}
}

// An interrupt stops every branch; the finally steps of each still run.
func TestParallelInterrupt(t *testing.T) {
	r := newRadio()
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once
	sink := runner.SinkFunc(func(e runner.Event) {
		if e.Type == runner.StepStarted && e.Step.Kind == "barrier" {
			once.Do(cancel)
		}
	})
	res := r.run(t, ctx, `steps:
  - parallel:
      a:
        steps:
          - barrier: sync
        finally:
          - send: echo fa
            to: a
            expect: fa
      b:
        steps:
          - barrier: sync
        finally:
          - send: echo fb
            to: b
            expect: fb
`, sink)
	got := byPath(res)
	if res.Status != runner.Interrupted || got["0.a.finally.0"].Status != runner.Passed || got["0.b.finally.0"].Status != runner.Passed {
		t.Errorf("status %s\n%s", res.Status, statuses(res))
	}
}

// A parallel step that does not run reports every step of its branches
// as not run, so reports list the same steps however far a run got.
func TestParallelSkipped(t *testing.T) {
	r := newRadio()
	res := r.run(t, context.Background(), `steps:
  - assert: "false"
  - parallel:
      a:
        steps: [{send: x, to: a}]
        finally: [{send: y, to: a}]
      b: [{barrier: s}, {send: z, to: b}]
      c: [{barrier: s}]
`, nil)
	want := "0:failed 1.a.0:skipped 1.a.finally.0:skipped 1.a:skipped 1.b.0:skipped 1.b.1:skipped 1.b:skipped 1.c.0:skipped 1.c:skipped 1:skipped"
	if got := statuses(res); got != want {
		t.Errorf("steps\n%s\nwant\n%s", got, want)
	}
	if b := byPath(res)["1.b.1"]; b.Branch != "b" {
		t.Errorf("a skipped branch step names its branch: %+v", b)
	}
}

// A group with retries around a parallel: step runs the whole block
// again; the steps of both branches count in its attempts.
func TestParallelInRetriedGroup(t *testing.T) {
	r := newRadio()
	close(r.release)
	tries := 0
	r.a.handle = func(line string) string {
		tries++
		if tries == 1 {
			return "bad\r\n"
		}
		return "good\r\n"
	}
	res := r.run(t, context.Background(), `steps:
  - group: g
    retries: 1
    steps:
      - parallel:
          a: [{send: try, to: a, expect: good, timeout: 1s}]
          b: [{send: echo b, to: b, expect: b}]
`, nil)
	g := byPath(res)["0"]
	if res.Status != runner.Passed || !g.Flaky || len(g.Attempts) != 2 || g.Attempts[0].Executions.Failed != 1 || g.Attempts[0].Executions.Passed != 1 {
		t.Errorf("status %s, group %+v\n%s", res.Status, g, statuses(res))
	}
}

// However the branches interleave, a branch that fails before a barrier
// never releases the other from it, nor fails it: the other is cancelled.
func TestParallelFailureBeforeBarrier(t *testing.T) {
	for i := range 50 {
		r := newRadio()
		res := r.run(t, context.Background(), `steps:
  - parallel:
      a: [{assert: "1 == 2"}, {barrier: go}]
      b: [{barrier: go}, {send: echo b, to: b}]
`, nil)
		got := byPath(res)
		if b := got["0.b.0"]; b.Status != runner.Skipped || !strings.HasPrefix(b.Message, "cancelled: branch a failed") || got["0.b.1"].Status != runner.Skipped {
			t.Fatalf("round %d: b's barrier %s %q, its send %s", i, b.Status, b.Message, got["0.b.1"].Status)
		}
	}
}

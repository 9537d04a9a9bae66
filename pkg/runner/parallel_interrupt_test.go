package runner_test

import (
	"context"
	"sync"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
)

// An interrupt while branches wait at a barrier, or arrive at it, ends
// each wait interrupted however the branches interleave: never passed,
// never skipped as if another branch had failed. The finally steps of
// both branches run and the run is interrupted.
func TestParallelInterruptAtBarrier(t *testing.T) {
	for i := range 40 {
		r := newRadio()
		close(r.release)
		ctx, cancel := context.WithCancel(context.Background())
		var once sync.Once
		var first string // the barrier step that waited when the interrupt came
		sink := runner.SinkFunc(func(e runner.Event) {
			if e.Type == runner.StepStarted && e.Step.Kind == "barrier" {
				once.Do(func() { first = e.Step.Path; cancel() })
			}
		})
		res := r.run(t, ctx, `steps:
  - parallel:
      a:
        steps:
          - barrier: sync
          - send: echo after-a
            to: a
        finally:
          - send: echo fa
            to: a
            expect: fa
      b:
        steps:
          - barrier: sync
          - send: echo after-b
            to: b
        finally:
          - send: echo fb
            to: b
            expect: fb
`, sink)
		cancel()
		got := byPath(res)
		bad := res.Status != runner.Interrupted || got["0.a.finally.0"].Status != runner.Passed || got["0.b.finally.0"].Status != runner.Passed
		for _, p := range []string{first, "0.a", "0.b"} {
			if got[p].Status != runner.Interrupted {
				bad = true
			}
		}
		// The other branch is interrupted at its barrier or before it.
		for _, p := range []string{"0.a.0", "0.b.0"} {
			if st := got[p].Status; st != runner.Interrupted && st != runner.Skipped {
				bad = true
			}
		}
		for _, p := range []string{"0.a.1", "0.b.1"} {
			if got[p].Status != runner.Skipped {
				bad = true
			}
		}
		if bad {
			t.Fatalf("round %d: status %s\n%s\n0.a.0 %q, 0.b.0 %q", i, res.Status, statuses(res), got["0.a.0"].Message, got["0.b.0"].Message)
		}
	}
}

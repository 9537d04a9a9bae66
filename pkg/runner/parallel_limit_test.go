package runner_test

import (
	"context"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
)

// A branch's finally steps have a budget of their own, as the
// sequence's do: they run after the branches used up --max-steps, and
// the sequence's finally steps after them.
func TestParallelFinallyPastStepLimit(t *testing.T) {
	seq := load(t, `steps:
  - parallel:
      a:
        steps:
          - repeat: 100
            steps: [{set: {x: 1}}]
        finally:
          - set: {fa: 1}
          - set: {fa: 2}
          - set: {fa: 3}
      b:
        steps:
          - repeat: 100
            steps: [{set: {y: 1}}]
        finally:
          - set: {fb: 1}
          - set: {fb: 2}
          - set: {fb: 3}
finally:
  - set: {done: 1}
  - set: {done: 2}
  - assert: branches.a.fa == 3 && branches.b.fb == 3
`)
	res := runner.Run(context.Background(), seq, runner.Bench{}, runner.Options{KeepSteps: true, MaxSteps: 3})
	if res.Status != runner.Errored {
		t.Fatalf("run %s, want error: %s", res.Status, res.Error)
	}
	got := byPath(res)
	for _, p := range []string{"0.a.finally.0", "0.a.finally.1", "0.a.finally.2", "0.b.finally.0", "0.b.finally.1", "0.b.finally.2", "finally.0", "finally.1", "finally.2"} {
		if got[p].Status != runner.Passed {
			t.Errorf("step %s: %s %q", p, got[p].Status, got[p].Message)
		}
	}
}

package runner_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// A barrier inside a repeat of a group that -m deselects is absent for
// each of its crossings: the other branch's wait at it fails at once,
// naming the branch that did not come, instead of waiting out its
// timeout.
func TestParallelDeselectedRepeatBarrier(t *testing.T) {
	r := newRadio()
	close(r.release)
	seq := load(t, `devices:
  a: {port: /dev/a}
  b: {port: /dev/b}
steps:
  - parallel:
      a:
        - group: slow
          tags: [slow]
          steps:
            - repeat: {count: 2}
              steps:
                - repeat: {count: 2}
                  steps: [{barrier: tick}]
        - barrier: tock
          timeout: 1h
      b:
        - repeat: {count: 4}
          steps:
            - barrier: tick
              timeout: 3s
        - barrier: tock
          timeout: 1h
    on_failure: continue
`)
	seq = steps.Deselect(seq, func(s steps.Selected) string {
		if s.Step != nil && slices.Contains(s.Tags, "slow") {
			return "deselected by -m"
		}
		return ""
	})
	res := runner.Run(context.Background(), seq, runner.Bench{
		Open: func(ctx context.Context, d *steps.Device) (runner.Console, error) { return r.a, nil },
	}, runner.Options{KeepSteps: true})
	got := byPath(res)
	for i := range 4 {
		p := "0.b.0#" + string(rune('0'+i)) + ".0"
		if st := got[p]; st.Status != runner.Failed || !strings.Contains(st.Message, "branch a did not run its barrier step (deselected by -m)") {
			t.Errorf("b's crossing %d: %s %q\n%s", i+1, st.Status, st.Message, statuses(res))
		}
	}
	if got["0.a.1"].Status != runner.Passed || got["0.b.1"].Status != runner.Passed {
		t.Errorf("the barrier after: a %s, b %s", got["0.a.1"].Status, got["0.b.1"].Status)
	}
}

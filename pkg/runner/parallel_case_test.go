package runner_test

import (
	"context"
	"slices"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
)

// A group in a branch has the tags of the groups around it in its own
// branch, never those of a group another branch is in at the time: b
// enters gb while a is inside ga (a waits in ga at barrier two for b).
func TestParallelGroupTagsPerBranch(t *testing.T) {
	r := newRadio()
	close(r.release)
	res := r.run(t, context.Background(), `tags: [s]
steps:
  - parallel:
      a:
        - group: ga
          tags: [x]
          steps:
            - barrier: one
            - barrier: two
      b:
        - barrier: one
        - group: gb
          tags: [y]
          steps:
            - group: inner
              steps:
                - barrier: two
        - group: after
          steps:
            - send: echo b
              to: b
`, nil)
	if res.Status != runner.Passed {
		t.Fatalf("status %s: %s\n%s", res.Status, res.Error, statuses(res))
	}
	got := byPath(res)
	for path, want := range map[string][]string{
		"0.a.0":   {"x", "s"},
		"0.b.1":   {"y", "s"},
		"0.b.1.0": {"y", "s"},
		"0.b.2":   {"s"},
	} {
		if tags := got[path].Tags; !slices.Equal(tags, want) {
			t.Errorf("group %s (%s): tags %v, want %v", path, got[path].Name, tags, want)
		}
	}
}

// A branch's groups take the tags of the groups around the parallel:
// step, and the group after the block has its own again.
func TestParallelGroupTagsAroundBlock(t *testing.T) {
	r := newRadio()
	close(r.release)
	res := r.run(t, context.Background(), `steps:
  - group: outer
    tags: [o]
    steps:
      - parallel:
          a: [{group: ga, tags: [x], steps: [{barrier: one}]}]
          b: [{group: gb, steps: [{barrier: one}]}]
  - group: last
    steps: [{send: echo z, to: a}]
`, nil)
	got := byPath(res)
	for path, want := range map[string][]string{"0": {"o"}, "0.0.a.0": {"x", "o"}, "0.0.b.0": {"o"}, "1": nil} {
		if tags := got[path].Tags; !slices.Equal(tags, want) {
			t.Errorf("group %s (%s): tags %v, want %v", path, got[path].Name, tags, want)
		}
	}
}

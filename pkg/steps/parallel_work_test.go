package steps_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/steps"
)

// hostileBarriers is a sequence of n parallel: steps, each of 16
// branches that cross one barrier 10,000 times: each alone is within
// the limits, together they would take minutes to follow.
func hostileBarriers(n int) []byte {
	var b strings.Builder
	b.WriteString("steps:\n")
	for range n {
		b.WriteString("  - parallel:\n")
		for j := range steps.MaxBranches {
			fmt.Fprintf(&b, "      b%d: [{repeat: 10000, steps: [{barrier: x}]}]\n", j)
		}
	}
	return []byte(b.String())
}

// Following the barriers of a file is bounded by MaxBarrierWork over
// the whole file: a file past it is refused with a positioned error at
// the parallel: step where the work ran out, and the work spent stays
// within the bound (one branch's unrolling past it at most).
func TestBarrierWorkBound(t *testing.T) {
	var work uint64
	defer steps.BarrierWork(func(n uint64) { work = n })()
	_, err := steps.Parse("h.yaml", hostileBarriers(40), steps.LoadOptions{})
	var el steps.ErrorList
	if !errors.As(err, &el) {
		t.Fatalf("a file whose barriers take more than the work bound loads: %v", err)
	}
	found := false
	for _, e := range el {
		if strings.Contains(e.Msg, "checking the order of the barriers") {
			found = true
			if e.Pos.Line < 2 || e.Pos.Col != 5 {
				t.Errorf("the error is not at a parallel: step: %v", e)
			}
		}
	}
	if !found {
		t.Errorf("no work-bound error: %v", err)
	}
	if limit := uint64(steps.MaxBarrierWork + 2*steps.MaxBarrierOrder); work > limit {
		t.Errorf("validation spent %d on barriers, more than %d", work, limit)
	}

	// One such parallel: step is well within the bound, and checked in
	// full.
	work = 0
	if _, err := steps.Parse("h.yaml", hostileBarriers(1), steps.LoadOptions{}); err != nil && strings.Contains(err.Error(), "checking the order") {
		t.Errorf("one parallel: step is refused: %v", err)
	}
	if work < 16*10_000 || work > steps.MaxBarrierWork/10 {
		t.Errorf("one parallel: step of 16 branches of 10,000 crossings took %d", work)
	}
}

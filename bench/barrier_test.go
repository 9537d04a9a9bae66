package bench

import (
	"context"
	"strings"
	"testing"
)

// Scenario (u) runs: each crossing's two lines reach the board on their
// own consoles, and the runner's side reports each crossing. It asserts
// no timing.
func TestBarrierScenario(t *testing.T) {
	o := tiny(Barrier)
	o.BarrierN = 6
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Barrier == nil || len(rep.Barrier.Sides) != 1 {
		t.Fatalf("barrier report %+v", rep.Barrier)
	}
	s := rep.Barrier.Sides[0]
	if s.Board.N != 6 || s.Runner.N != 6 || len(s.Rounds) != 2 {
		t.Errorf("board skews %d, runner skews %d, rounds %d; want 6, 6 and 2", s.Board.N, s.Runner.N, len(s.Rounds))
	}
	var md strings.Builder
	rep.Barrier.markdown(&md)
	if !strings.Contains(md.String(), "| hilrun run | 6 |") {
		t.Errorf("markdown:\n%s", md.String())
	}
}

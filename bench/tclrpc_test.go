package bench

import (
	"context"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/testenv"
)

// TestTclRPCBench runs the Tcl RPC benchmark in a few reads: every side
// reads, the values are checked against the board, and the report holds
// each side's figures and the ratios. Nothing here measures anything
// worth reading.
func TestTclRPCBench(t *testing.T) {
	bin := testenv.NeedTool(t, "openocd", "apt-get install openocd")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := TclRPCBench(ctx, TclOptions{OpenOCD: bin, Rounds: 3, N: 5, Warmup: 1})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{SideTclRPC, SideTelnet, SideRawTclRPC}
	if len(rep.Sides) != len(want) {
		t.Fatalf("%d sides, want %d", len(rep.Sides), len(want))
	}
	for i, s := range rep.Sides {
		if s.Side != want[i] || s.Summary.N != 15 || len(s.RoundMedians) != 3 || s.Summary.Median <= 0 {
			t.Errorf("side %d: %+v, want %s with 15 reads over 3 rounds", i, s, want[i])
		}
	}
	if rep.Ratio <= 0 || rep.TelnetRatio <= 0 || rep.Speedup <= 0 {
		t.Errorf("ratios %v, %v, %v, want positive", rep.Ratio, rep.TelnetRatio, rep.Speedup)
	}
	if _, err := TclRPCBench(ctx, TclOptions{OpenOCD: bin}); err == nil {
		t.Error("zero rounds: no error")
	}
}

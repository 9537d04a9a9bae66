package bench

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
)

// minusRounds returns the median over the rounds of pick(a's round) -
// pick(b's round): what a adds to b, with the noise of each round on
// both sides.
func minusRounds(a, b []Summary, pick func(Summary) time.Duration) (time.Duration, bool) {
	var d []time.Duration
	for i := range min(len(a), len(b)) {
		d = append(d, pick(a[i])-pick(b[i]))
	}
	if len(d) == 0 {
		return 0, false
	}
	slices.Sort(d)
	if len(d)%2 == 1 {
		return d[len(d)/2], true
	}
	return (d[len(d)/2-1] + d[len(d)/2]) / 2, true
}

func (r *GapReport) markdown(b *strings.Builder) {
	fmt.Fprintf(b, "### (v) the time between steps\n\n")
	what := "turnaround: from the end of the board's write of reply N to the arrival of line N+1"
	if !r.Turnaround {
		what = "cycle: from the arrival of line N to that of line N+1 (this board does not stamp its replies, so its own reply time is in it, the same for every side)"
	}
	fmt.Fprintf(b, "%d send/expect steps per side and round (`send: echo ping-I`, `expect: \"ping-I\\r\\nsim> \"`, written out one by one after a sync step), in %d alternating rounds, each a fresh device (%s) and process. \"%s\" is the hilrun binary as CI runs it, `hilrun run --port console=PATH --json FILE steps.yaml`, its progress console on a pipe; its steps' times come from its JSON report, to the microsecond. \"%s\" runs the same sequence with the same engine in a hilbench child, without the command line and the progress console. Tcl expect and the C client make the same round trips (expect_rtt.tcl, floor rtt, no warm-up).\n\n", r.Steps, r.Rounds, r.Device, sideHilrunBin, sideEngine)
	var own []*GapSeries
	for _, s := range r.Sides {
		if s.Gap.N > 0 {
			own = append(own, s)
		}
	}
	if len(own) > 0 {
		fmt.Fprintf(b, "By the runner's own clock: gap = start of step N+1 - (start + duration of step N). Per-step wall = (end of the last step - start of the first) / steps.\n\n")
		fmt.Fprintf(b, "| side | gaps | median gap | p95 | p99 | mean | max | per-step wall | median step duration | wall - median step |\n")
		fmt.Fprintf(b, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
		for _, s := range own {
			fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", s.Side, s.Gap.N, us(s.Gap.Median), us(s.Gap.P95), us(s.Gap.P99), us(s.Gap.Mean), us(s.Gap.Max),
				us(s.WallPerStep), us(s.Step.Median), signedUS(s.WallPerStep-s.Step.Median))
		}
		b.WriteString("\n")
	}
	rounds := map[string][]Summary{}
	for _, s := range r.Sides {
		rounds[s.Side] = s.Rounds
	}
	fmt.Fprintf(b, "Board-seen %s. Per-step wall by the board = the mean cycle. Verdicts: the median of the rounds' ratios of median turnaround; minus C: the median of the rounds' differences of median turnaround.\n\n", what)
	fmt.Fprintf(b, "| side | n | median | p95 | p99 | mean | per-step wall (board) | median step (own clock) | vs C | vs Tcl | minus C: median | minus C: p99 |\n")
	fmt.Fprintf(b, "|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|\n")
	for _, s := range r.Sides {
		vsC, vsTcl, minus, minus99 := "-", "-", "-", "-"
		if s.Side != sideFloor {
			if v := verdict(rounds, s.Side, sideFloor, pickMedian); !math.IsNaN(v) {
				vsC = fmt.Sprintf("%.3f", v)
			}
			if d, ok := minusRounds(s.Rounds, rounds[sideFloor], pickMedian); ok {
				minus = signedUS(d)
			}
			if d, ok := minusRounds(s.Rounds, rounds[sideFloor], pickP99); ok {
				minus99 = signedUS(d)
			}
		}
		if s.Side != sideExpect {
			if v := verdict(rounds, s.Side, sideExpect, pickMedian); !math.IsNaN(v) {
				vsTcl = fmt.Sprintf("%.3f", v)
			}
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", s.Side, s.Board.N, us(s.Board.Median), us(s.Board.P95), us(s.Board.P99), us(s.Board.Mean),
			us(s.Cycle.Mean), us(s.Step.Median), vsC, vsTcl, minus, minus99)
	}
	roundVerdicts(b, "board-seen turnaround", sideHilrunBin, rounds)
	roundVerdicts(b, "board-seen turnaround", sideFloorAgain, rounds)
	fmt.Fprintf(b, "\nOne round of each side:\n\n")
	for _, s := range r.Sides {
		fmt.Fprintf(b, "    %s\n", s.Command)
	}
	b.WriteString("\n")
}

// The goals of hilrun #33 as verdicts of one run, and the p95 verdict of
// (c): each a median of per-round ratios, the rounds having run both
// sides of the ratio.

package bench

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// sideRounds returns the per-round summaries of each side of (a).
func (r *RTTReport) sideRounds() map[string][]Summary {
	m := map[string][]Summary{}
	for _, s := range r.Sides {
		m[s.Side] = s.Rounds
	}
	return m
}

// sideRounds returns the per-round error summaries of each side of (l).
func (r *PeriodReport) sideRounds() map[string][]Summary {
	m := map[string][]Summary{}
	for _, s := range r.Sides {
		m[s.Side] = s.Rounds
	}
	return m
}

// verdict is the median over the rounds of pick(side's round) /
// pick(peer's round); NaN when either side did not run.
func verdict(rounds map[string][]Summary, side, peer string, pick func(Summary) time.Duration) float64 {
	a, b := rounds[side], rounds[peer]
	if len(a) == 0 || len(b) == 0 {
		return math.NaN()
	}
	return medianFloat(roundRatios(a, b, pick))
}

// pythonPeer is the Python side of (c) that hilrun's delays are held
// against: the plain time.sleep sender when it ran, else pexpect.
func (r *DelayReport) pythonPeer() string {
	for _, s := range r.Series {
		if s.Side == sidePySleep {
			return sidePySleep
		}
	}
	return sidePexpect
}

// p95Verdict returns hilrun run's p95 |error| over the Python peer's at
// D, as the median of the rounds' ratios, and that peer; NaN when
// either did not run at D.
func (r *DelayReport) p95Verdict(d time.Duration) (float64, string) {
	peer := r.pythonPeer()
	rounds := map[string][]Summary{}
	for _, s := range r.Series {
		if s.Delay == d {
			rounds[s.Side] = s.Rounds
		}
	}
	return verdict(rounds, sideRunner, peer, pickP95), peer
}

// p95Verdicts writes the verdict "hilrun p95 ≤ Python p95" of each D.
func (r *DelayReport) p95Verdicts(b *strings.Builder) {
	var lines []string
	for _, d := range delaysOf(r.Series) {
		v, peer := r.p95Verdict(d)
		if math.IsNaN(v) {
			continue
		}
		lines = append(lines, fmt.Sprintf("| %s | %s | %.3f | %s |", d, peer, v, met(v <= 1)))
	}
	if len(lines) == 0 {
		return
	}
	fmt.Fprintf(b, "\nGoal: %s p95 |error| ≤ Python's (verdict = median of the rounds' ratios of p95 |error|, hilrun / Python):\n\n", sideRunner)
	fmt.Fprintf(b, "| D | Python side | p95 verdict | met |\n|--:|---|--:|---|\n%s\n", strings.Join(lines, "\n"))
}

func met(ok bool) string {
	if ok {
		return "yes"
	}
	return "no"
}

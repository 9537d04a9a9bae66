// The goals of hilrun #33 as verdicts of one run, and the p95 verdict of
// (c): each a median of per-round ratios, the rounds having run both
// sides of the ratio.

package bench

import (
	"fmt"
	"math"
	"slices"
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

// Goal is one goal's verdicts over the runs.
type Goal struct {
	Name string `json:"name"`
	// Unit is "x" for a ratio, "µs" for a time in microseconds.
	Unit string `json:"unit"`
	// Verdicts are each run's verdict, NaN-free: runs without one are
	// left out.
	Verdicts []float64 `json:"verdicts"`
	Median   float64   `json:"median"`
	Min      float64   `json:"min"`
	Max      float64   `json:"max"`
	// Met says whether the median verdict meets the goal; Want says what
	// the goal is, or why it cannot be judged (Met is then false).
	Met  bool   `json:"met"`
	Want string `json:"want"`
	// AA marks an A/A row: the band noise gives, not a goal of its own.
	AA bool `json:"aa,omitempty"`
}

// newGoal returns the goal of name over verdicts (NaNs left out).
func newGoal(name, unit string, verdicts []float64) Goal {
	g := Goal{Name: name, Unit: unit}
	for _, v := range verdicts {
		if !math.IsNaN(v) {
			g.Verdicts = append(g.Verdicts, v)
		}
	}
	if len(g.Verdicts) > 0 {
		g.Median, g.Min, g.Max = medianFloat(g.Verdicts), slices.Min(g.Verdicts), slices.Max(g.Verdicts)
	}
	return g
}

// atMost sets g's goal to a median verdict of at most limit.
func (g Goal) atMost(limit float64, want string) Goal {
	g.Want, g.Met = want, len(g.Verdicts) > 0 && g.Median <= limit
	return g
}

// goals returns the verdicts of the goals of hilrun #33 over runs; a goal
// whose scenario or sides did not run is left out.
func goals(runs []*Report) []Goal {
	pick := func(f func(r *Report) float64) []float64 {
		var v []float64
		for _, r := range runs {
			v = append(v, f(r))
		}
		return v
	}
	var out []Goal
	add := func(g Goal) {
		if len(g.Verdicts) > 0 {
			out = append(out, g)
		}
	}
	rtt := func(side string) func(r *Report) float64 {
		return func(r *Report) float64 {
			if r.RTT == nil {
				return math.NaN()
			}
			return verdict(r.RTT.sideRounds(), side, sideFloor, pickMedian)
		}
	}
	add(newGoal("(a) round trip, median: hilrun run / C client", "x", pick(rtt(sideRunner))).atMost(1.3, "≤ 1.3"))
	aa := newGoal("(a) A/A: C client again / C client, median", "x", pick(rtt(sideFloorAgain)))
	aa.AA, aa.Want = true, "noise band"
	add(aa)
	period := func(side string) func(r *Report) float64 {
		return func(r *Report) float64 {
			if r.Period == nil {
				return math.NaN()
			}
			return verdict(r.Period.sideRounds(), side, sideGoLoop, pickP99)
		}
	}
	loopAA := newGoal("(l) A/A: Go loop again / Go loop, p99", "x", pick(period(sideGoLoopAgain)))
	loopAA.AA, loopAA.Want = true, "noise band"
	every := newGoal("(l) repeat every:, p99 |error|: hilrun run / Go loop", "x", pick(period(sideRunner)))
	if len(loopAA.Verdicts) > 0 {
		every = every.atMost(loopAA.Max, fmt.Sprintf("within the Go loop's A/A band (≤ %.3f)", loopAA.Max))
	} else {
		every.Want = "needs the A/A band: -go-loop -aa"
	}
	add(every)
	add(loopAA)
	for _, d := range delaysOf(firstDelays(runs)) {
		name := ""
		v := pick(func(r *Report) float64 {
			if r.Delay == nil {
				return math.NaN()
			}
			x, peer := r.Delay.p95Verdict(d)
			name = fmt.Sprintf("(c) delay %s, p95 |error|: hilrun run / %s", d, peer)
			return x
		})
		add(newGoal(name, "x", v).atMost(1, "≤ 1"))
	}
	add(newGoal("(v) gap between steps, median, hilrun run's own clock", "µs", pick(func(r *Report) float64 {
		if r.Gap == nil {
			return math.NaN()
		}
		for _, s := range r.Gap.Sides {
			if s.Side == sideHilrunBin && s.Gap.N > 0 {
				return float64(s.Gap.Median) / 1e3
			}
		}
		return math.NaN()
	})).atMost(10, "≤ 10 µs"))
	return out
}

// firstDelays returns the delay series of the first run that has (c).
func firstDelays(runs []*Report) []*DelaySeries {
	for _, r := range runs {
		if r.Delay != nil {
			return r.Delay.Series
		}
	}
	return nil
}

// goalsMarkdown writes the goals' table.
func goalsMarkdown(b *strings.Builder, goals []Goal, runs int) {
	if len(goals) == 0 {
		return
	}
	fmt.Fprintf(b, "### Goals over %d run(s)\n\n", max(runs, 1))
	fmt.Fprintf(b, "Each run's verdict is the median of its rounds' ratios (hilrun / peer, each round running both); the median verdict is the median over the runs, the band their min-max. A/A rows are the same peer twice: the band noise alone gives.\n\n")
	fmt.Fprintf(b, "| goal | runs | median verdict | band | met | per run |\n|---|--:|--:|--:|---|---|\n")
	for _, g := range goals {
		f := func(v float64) string {
			if g.Unit == "µs" {
				return fmt.Sprintf("%.1f µs", v)
			}
			return fmt.Sprintf("%.3f", v)
		}
		var per []string
		for _, v := range g.Verdicts {
			per = append(per, f(v))
		}
		verdictCell := "-"
		switch {
		case g.AA:
			verdictCell = g.Want
		case g.Want != "" && len(g.Verdicts) > 0 && !strings.HasPrefix(g.Want, "needs"):
			verdictCell = met(g.Met) + " (" + g.Want + ")"
		case g.Want != "":
			verdictCell = g.Want
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s – %s | %s | %s |\n", g.Name, len(g.Verdicts), f(g.Median), f(g.Min), f(g.Max), verdictCell, strings.Join(per, ", "))
	}
	b.WriteString("\n")
}

package bench

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// rounds returns per-round summaries whose median, p95 and p99 are the
// microseconds given.
func rounds(us ...int) []Summary {
	var out []Summary
	for _, u := range us {
		d := time.Duration(u) * time.Microsecond
		out = append(out, Summary{N: 1, Median: d, P95: d, P99: d})
	}
	return out
}

// TestGoalsOverRuns gives each goal the median of the runs' verdicts
// with their min-max band, and judges the median against the goal: the
// repeat every: goal against the largest A/A verdict of the Go loop.
func TestGoalsOverRuns(t *testing.T) {
	run := func(rtt, every, loopAA, delay int, gap time.Duration) *Report {
		return &Report{
			RTT: &RTTReport{Sides: []*Series{
				{Side: sideRunner, Rounds: rounds(rtt, rtt)},
				{Side: sideFloor, Rounds: rounds(100, 100)},
				{Side: sideFloorAgain, Rounds: rounds(101, 99)},
			}},
			Period: &PeriodReport{Sides: []*PeriodSeries{
				{Side: sideRunner, Rounds: rounds(every)},
				{Side: sideGoLoop, Rounds: rounds(100)},
				{Side: sideGoLoopAgain, Rounds: rounds(loopAA)},
			}},
			Delay: &DelayReport{Series: []*DelaySeries{
				{Delay: time.Millisecond, Side: sideRunner, Rounds: rounds(delay)},
				{Delay: time.Millisecond, Side: sidePySleep, Rounds: rounds(100)},
				{Delay: time.Millisecond, Side: sidePexpect, Rounds: rounds(1)},
			}},
			Gap: &GapReport{Sides: []*GapSeries{{Side: sideHilrunBin, Gap: Summary{N: 10, Median: gap}}}},
		}
	}
	runs := []*Report{
		run(120, 105, 110, 90, 8*time.Microsecond),
		run(140, 130, 120, 120, 12*time.Microsecond),
		run(125, 100, 90, 80, 9*time.Microsecond),
	}
	got := map[string]Goal{}
	for _, g := range goals(runs) {
		got[g.Name] = g
	}
	check := func(name string, median, lo, hi float64, met bool) {
		t.Helper()
		g, ok := got[name]
		if !ok {
			t.Fatalf("no goal %q among %v", name, got)
		}
		if math.Abs(g.Median-median) > 1e-9 || math.Abs(g.Min-lo) > 1e-9 || math.Abs(g.Max-hi) > 1e-9 || g.Met != met || len(g.Verdicts) != 3 {
			t.Errorf("%s: median %v, band %v-%v, met %v over %d runs; want %v, %v-%v, %v over 3", name, g.Median, g.Min, g.Max, g.Met, len(g.Verdicts), median, lo, hi, met)
		}
	}
	check("(a) round trip, median: hilrun run / C client", 1.25, 1.2, 1.4, true)
	check("(l) repeat every:, p99 |error|: hilrun run / Go loop", 1.05, 1.0, 1.3, true)
	check("(l) A/A: Go loop again / Go loop, p99", 1.1, 0.9, 1.2, false)
	check("(c) delay 1ms, p95 |error|: hilrun run / Python time.sleep", 0.9, 0.8, 1.2, true)
	check("(v) gap between steps, median, hilrun run's own clock", 9, 8, 12, true)
	if g := got["(a) A/A: C client again / C client, median"]; !g.AA || len(g.Verdicts) != 3 {
		t.Errorf("the A/A row of (a): %+v", g)
	}

	// A run where hilrun's gap is above the goal in most runs fails it.
	runs[0].Gap.Sides[0].Gap.Median = 11 * time.Microsecond
	for _, g := range goals(runs) {
		if strings.HasPrefix(g.Name, "(v)") && g.Met {
			t.Errorf("gap goal met with a median of %v µs", g.Median)
		}
	}
	// Without the Go loop's A/A test, the repeat every: goal cannot be
	// judged.
	for _, r := range runs {
		r.Period.Sides = r.Period.Sides[:2]
	}
	var b strings.Builder
	goalsMarkdown(&b, goals(runs), 3)
	if !strings.Contains(b.String(), "needs the A/A band: -go-loop -aa") {
		t.Errorf("the goals' table does not say the A/A band is missing:\n%s", b.String())
	}
}

// TestBoardTurnarounds takes the turnaround from the end of the reply to
// the line before when the device stamps its replies, and the cycle
// otherwise.
func TestBoardTurnarounds(t *testing.T) {
	t0 := time.Unix(100, 0)
	at := func(us int) time.Time { return t0.Add(time.Duration(us) * time.Microsecond) }
	log := deviceLog{
		Rx: []sim.RxLine{{At: at(0), Line: "echo sync"}, {At: at(100), Line: "echo ping-0"}, {At: at(250), Line: "echo ping-1"}, {At: at(420), Line: "echo ping-2"}},
		Tx: []txStamp{{At: at(10), Line: 0}, {At: at(130), Line: 1}, {At: at(270), Line: 2}, {At: at(430), Line: 3}},
	}
	turn, cycle, err := boardTurnarounds(log, 3)
	if err != nil {
		t.Fatal(err)
	}
	us := func(v ...int) []time.Duration {
		var d []time.Duration
		for _, x := range v {
			d = append(d, time.Duration(x)*time.Microsecond)
		}
		return d
	}
	if !equalDurations(turn, us(120, 150)) || !equalDurations(cycle, us(150, 170)) {
		t.Errorf("turnarounds %v, cycles %v; want [120µs 150µs], [150µs 170µs]", turn, cycle)
	}
	log.Tx = nil
	if turn, _, _ = boardTurnarounds(log, 3); !equalDurations(turn, us(150, 170)) {
		t.Errorf("without reply stamps: %v, want the cycles", turn)
	}
	if _, _, err := boardTurnarounds(log, 4); err == nil || !strings.Contains(err.Error(), "step 3") {
		t.Errorf("a missing line: %v, want an error naming step 3", err)
	}
}

// TestStepsFromReport reads the steps after the sync step from hilrun's
// JSON report, to the microsecond it has.
func TestStepsFromReport(t *testing.T) {
	data := `{"passed": true, "sequences": [{"name": "steps", "steps": [
		{"kind": "send", "started_ms": 0.000, "duration_ms": 0.100},
		{"kind": "send", "started_ms": 0.105, "duration_ms": 0.080},
		{"kind": "send", "started_ms": 0.190, "duration_ms": 0.070}]}]}`
	out, err := stepsFromReport([]byte(data), 2)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{105_000, 190_000}; out.StartedNs[0] != want[0] || out.StartedNs[1] != want[1] {
		t.Errorf("starts %v, want %v", out.StartedNs, want)
	}
	if want := []int64{80_000, 70_000}; out.SamplesNs[0] != want[0] || out.SamplesNs[1] != want[1] {
		t.Errorf("durations %v, want %v", out.SamplesNs, want)
	}
	if _, err := stepsFromReport([]byte(data), 3); err == nil {
		t.Error("a report with too few steps was read")
	}
}

// TestGapsOnPythonBoard runs a short (v) and (c) on the Python board: the
// hilrun binary and the engine make every step, the board stamps every
// line and reply, and the report has the tables and the goals.
func TestGapsOnPythonBoard(t *testing.T) {
	py := testenv.NeedTool(t, "python3", "apt-get install python3")
	opts := tiny(Gap, Delay)
	opts.Device, opts.BoardPython, opts.GapN, opts.Delays = DevicePython, py, 8, []time.Duration{time.Millisecond}
	rep, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	g := rep.Gap
	if g == nil || !g.Turnaround || len(g.Sides) != 2 {
		t.Fatalf("(v): %+v, want two sides and the board's turnarounds", g)
	}
	for _, s := range g.Sides {
		if want := opts.Rounds * (opts.GapN - 1); s.Gap.N != want || s.Board.N != want || s.Step.N != opts.Rounds*opts.GapN {
			t.Errorf("%s: %d gaps, %d turnarounds, %d steps; want %d, %d, %d", s.Side, s.Gap.N, s.Board.N, s.Step.N, want, want, opts.Rounds*opts.GapN)
		}
	}
	var sleeper bool
	for _, s := range rep.Delay.Series {
		sleeper = sleeper || s.Side == sidePySleep && s.Errors.N == opts.DelayN
	}
	if !sleeper {
		t.Errorf("(c) on the Python board has no %s side: %+v", sidePySleep, rep.Delay.Series)
	}
	var md strings.Builder
	if err := rep.WriteMarkdown(&md); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### (v)", "### Goals over 1 run(s)", "(v) gap between steps", "Board-seen turnaround", "| p95 |"} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("the report lacks %q:\n%s", want, md.String())
		}
	}
}

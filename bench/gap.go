// Scenario (v): the time between steps. A sequence of N send/expect steps
// written out one by one, run by the real hilrun binary as CI runs it
// (its progress console writing to a pipe, --json for the steps' times),
// beside Tcl expect and the C client making the same round trips.

package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Sides of (v) that only it has.
const (
	// sideHilrunBin is the hilrun binary, `hilrun run --port console=PATH
	// --json FILE`, its progress console on a pipe.
	sideHilrunBin = "hilrun run"
	// sideEngine is the same sequence run by the engine in a hilbench
	// child, without the progress console or the command line around it.
	sideEngine = "hilrun engine, no progress console (diagnostic)"
)

// GapReport is scenario (v).
type GapReport struct {
	Steps  int          `json:"steps"`
	Rounds int          `json:"rounds"`
	Device string       `json:"device"`
	Sides  []*GapSeries `json:"sides"`
	// Turnaround says whether the device stamped its replies: the board's
	// turnaround is then from the end of the write of reply N to the
	// arrival of line N+1; else (the Go board) the board's cycle, from
	// line N to line N+1, stands in for it.
	Turnaround bool `json:"turnaround"`
}

// GapSeries is one side of (v).
type GapSeries struct {
	Side    string `json:"side"`
	Command string `json:"command"`
	// Gap is the runner's own account: step N+1's start less step N's
	// end (started + duration). hilrun sides only.
	Gap Summary `json:"gap"`
	// Step is each step's duration by the side's own clock.
	Step Summary `json:"step"`
	// WallPerStep is, by the side's own clock, the time from the first
	// step's start to the last one's end over the steps (hilrun sides).
	WallPerStep time.Duration `json:"wall_per_step_ns"`
	// Board is the board-seen turnaround (or cycle, see
	// GapReport.Turnaround); Cycle the time from line N to line N+1.
	Board Summary `json:"board"`
	Cycle Summary `json:"cycle"`
	// Rounds summarize Board per round, GapRounds Gap per round.
	Rounds    []Summary `json:"rounds"`
	GapRounds []Summary `json:"gap_rounds,omitempty"`

	gaps, stepDur, board, cycle []time.Duration
	wall                        time.Duration
	wallSteps                   int
}

// gapSide is one way of making (v)'s steps.
type gapSide struct {
	s    *GapSeries
	kind string
	args func(path string, n int) []string
}

// kindHilrunBin is the real hilrun binary (bencher.hilrun).
const kindHilrunBin = "hilrun-binary"

func (b *bencher) gapSides() []gapSide {
	o := b.opts
	sides := []gapSide{
		{&GapSeries{Side: sideHilrunBin, Command: "go build ./cmd/hilrun && ./hilrun run --port console=PATH --json FILE steps.yaml | cat"}, kindHilrunBin,
			func(path string, n int) []string { return []string{path, itoa(n)} }},
		{&GapSeries{Side: sideEngine, Command: "HILBENCH_CHILD=1 hilbench steps-runner -serial PATH -n N"}, kindHilrun,
			func(path string, n int) []string { return []string{"steps-runner", "-serial", path, "-n", itoa(n)} }},
	}
	if o.Expect != "" {
		sides = append(sides, gapSide{&GapSeries{Side: sideExpect, Command: "expect bench/expect_rtt.tcl PATH N 0"}, kindExpect,
			func(path string, n int) []string { return []string{"expect_rtt.tcl", path, itoa(n), "0"} }})
	}
	if b.floor != "" {
		floor := func(name string) gapSide {
			return gapSide{&GapSeries{Side: name, Command: "./floor rtt PATH N 0"}, kindFloor,
				func(path string, n int) []string { return []string{"rtt", path, itoa(n), "0"} }}
		}
		sides = append(sides, floor(sideFloor))
		if o.AA {
			sides = append(sides, floor(sideFloorAgain))
		}
	}
	return sides
}

// gaps runs scenario (v).
func (b *bencher) gaps(ctx context.Context) (*GapReport, error) {
	o := b.opts
	rep := &GapReport{Steps: o.GapN, Rounds: o.Rounds, Device: o.Device}
	sides := b.gapSides()
	for _, sd := range sides {
		rep.Sides = append(rep.Sides, sd.s)
	}
	for round := range o.Rounds {
		for _, sd := range rotate(sides, round) {
			err := b.withDevice(ctx, func(d device) error {
				out, err := b.gapRun(ctx, sd, d.SerialPath(), o.GapN)
				if err != nil {
					return err
				}
				log, err := d.Log()
				if err != nil {
					return err
				}
				rep.Turnaround = log.Tx != nil
				if err := sd.s.add(out, log, o.GapN); err != nil {
					return fmt.Errorf("%s: %w", sd.s.Side, err)
				}
				last := sd.s.Rounds[len(sd.s.Rounds)-1]
				b.progress("v: round %d/%d %-16s %d steps, board-seen median %s, p99 %s", round+1, o.Rounds, sd.s.Side, o.GapN, us(last.Median), us(last.P99))
				return nil
			})
			if err != nil {
				return rep, fmt.Errorf("time between steps: %w", err)
			}
		}
	}
	for _, s := range rep.Sides {
		s.Gap, s.Step, s.Board, s.Cycle = summarize(s.gaps), summarize(s.stepDur), summarize(s.board), summarize(s.cycle)
		if s.wallSteps > 0 {
			s.WallPerStep = s.wall / time.Duration(s.wallSteps)
		}
	}
	return rep, nil
}

// gapRun runs one round of side sd: n steps on the port at path.
func (b *bencher) gapRun(ctx context.Context, sd gapSide, path string, n int) (childOutput, error) {
	if sd.kind == kindHilrunBin {
		return b.runHilrunSteps(ctx, path, n)
	}
	out, _, err := b.run(ctx, sd.kind, sd.args(path, n), 10*time.Minute)
	return out, err
}

// add adds a round: the side's own record out (step durations, and for
// the hilrun sides their starts) and the device's log of it.
func (s *GapSeries) add(out childOutput, log deviceLog, n int) error {
	if len(out.SamplesNs) != n {
		return fmt.Errorf("recorded %d steps, want %d", len(out.SamplesNs), n)
	}
	steps := nanos(out.SamplesNs)
	s.stepDur = append(s.stepDur, steps...)
	if len(out.StartedNs) == n {
		starts := nanos(out.StartedNs)
		var round []time.Duration
		for i := 1; i < n; i++ {
			round = append(round, starts[i]-(starts[i-1]+steps[i-1]))
		}
		s.gaps = append(s.gaps, round...)
		s.GapRounds = append(s.GapRounds, summarize(round))
		s.wall += starts[n-1] + steps[n-1] - starts[0]
		s.wallSteps += n
	}
	board, cycle, err := boardTurnarounds(log, n)
	if err != nil {
		return err
	}
	s.board = append(s.board, board...)
	s.cycle = append(s.cycle, cycle...)
	s.Rounds = append(s.Rounds, summarize(board))
	return nil
}

// boardTurnarounds returns, for lines "echo ping-1" .. "echo ping-(n-1)"
// as the device received them, the board-seen turnaround (from the end of
// the write of the reply to the line before, when the device stamps its
// replies; else the cycle) and the cycle (from the line before).
func boardTurnarounds(log deviceLog, n int) (turn, cycle []time.Duration, err error) {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = -1
	}
	for k, l := range log.Rx {
		if rest, ok := strings.CutPrefix(l.Line, "echo ping-"); ok {
			if i, err := strconv.Atoi(rest); err == nil && i >= 0 && i < n && idx[i] < 0 {
				idx[i] = k
			}
		}
	}
	if i := slices.Index(idx, -1); i >= 0 {
		return nil, nil, fmt.Errorf("the device did not receive step %d's line", i)
	}
	var txAt map[int]time.Time
	if log.Tx != nil {
		txAt = map[int]time.Time{}
		for _, t := range log.Tx {
			txAt[t.Line] = t.At
		}
	}
	for i := 1; i < n; i++ {
		at, prev := log.Rx[idx[i]].At, log.Rx[idx[i-1]].At
		c := at.Sub(prev)
		cycle = append(cycle, c)
		if txAt == nil {
			turn = append(turn, c)
			continue
		}
		done, ok := txAt[idx[i-1]]
		if !ok {
			return nil, nil, fmt.Errorf("the device did not stamp its reply to step %d", i-1)
		}
		turn = append(turn, at.Sub(done))
	}
	return turn, cycle, nil
}

// stepsYAML is (v)'s sequence: the sync step, then n send/expect steps
// written out one by one, as a user lists steps.
func stepsYAML(n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: steps\nexpect_timeout: 10s\nsteps:\n%s", syncSteps)
	for i := range n {
		fmt.Fprintf(&b, "  - send: echo ping-%d\n    expect: %s\n", i, quoteYAML("ping-"+strconv.Itoa(i)+"\r\n"+prompt))
	}
	return b.String()
}

// runHilrunSteps runs (v)'s sequence with the hilrun binary as CI runs
// it: its progress console on a pipe this process drains, its JSON
// report to a file, whose steps give the starts and durations (to the
// microsecond, as the report has them).
func (b *bencher) runHilrunSteps(ctx context.Context, path string, n int) (childOutput, error) {
	seq := filepath.Join(b.opts.WorkDir, "steps.yaml")
	if err := os.WriteFile(seq, []byte(stepsYAML(n)), 0o644); err != nil {
		return childOutput{}, fmt.Errorf("write the sequence: %w", err)
	}
	report := filepath.Join(b.opts.WorkDir, "steps.json")
	ctx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.hilrun, "run", "--port", "console="+path, "--json", report, seq)
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		return childOutput{}, fmt.Errorf("%s run: %w: %s %s", b.hilrun, err, lastLines(stdout.String(), 5), lastLines(stderr.String(), 5))
	}
	data, err := os.ReadFile(report)
	if err != nil {
		return childOutput{}, fmt.Errorf("read hilrun's JSON report: %w", err)
	}
	return stepsFromReport(data, n)
}

// stepsFromReport returns the starts and durations of the n steps after
// the first (the sync step) in a JSON report of one sequence.
func stepsFromReport(data []byte, n int) (childOutput, error) {
	var rep struct {
		Sequences []struct {
			Steps []struct {
				Kind       string  `json:"kind"`
				StartedMS  float64 `json:"started_ms"`
				DurationMS float64 `json:"duration_ms"`
			} `json:"steps"`
		} `json:"sequences"`
	}
	if err := json.Unmarshal(data, &rep); err != nil {
		return childOutput{}, fmt.Errorf("read hilrun's JSON report: %w", err)
	}
	if len(rep.Sequences) != 1 || len(rep.Sequences[0].Steps) != n+1 {
		return childOutput{}, fmt.Errorf("hilrun's JSON report does not have one sequence of %d steps", n+1)
	}
	var out childOutput
	ns := func(ms float64) int64 { return int64(math.Round(ms * 1e6)) }
	for _, s := range rep.Sequences[0].Steps[1:] {
		out.StartedNs = append(out.StartedNs, ns(s.StartedMS))
		out.SamplesNs = append(out.SamplesNs, ns(s.DurationMS))
	}
	return out, nil
}

// hilrunBinary returns Options.Hilrun, or builds hilrun from this module
// into the work directory.
func hilrunBinary(ctx context.Context, o Options) (string, error) {
	if o.Hilrun != "" {
		return o.Hilrun, nil
	}
	exe := filepath.Join(o.WorkDir, "hilrun")
	out, err := exec.CommandContext(ctx, "go", "build", "-o", exe, "github.com/hilrun/hilrun/cmd/hilrun").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("build hilrun for scenario v (go build ./cmd/hilrun; -hilrun names a built one): %w: %s", err, lastLines(string(out), 5))
	}
	return exe, nil
}

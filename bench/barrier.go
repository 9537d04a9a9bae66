// Scenario (u): how far apart a barrier releases the branches of a
// parallel: step, as the runner sees it and as a board with two consoles
// sees the sends that follow.

package bench

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/steps"
)

// barrierWarmup is the number of unmeasured crossings at the start of
// each block of (u).
const barrierWarmup = 5

// BarrierReport is scenario (u).
type BarrierReport struct {
	N      int              `json:"n"`
	Rounds int              `json:"rounds"`
	Sides  []*BarrierSeries `json:"sides"`
}

// BarrierSeries is one side of (u).
type BarrierSeries struct {
	Side    string `json:"side"`
	Command string `json:"command"`
	// Board is |tA - tB| per crossing, where tA and tB are when the board
	// received the line each branch sent right after the barrier, on its
	// own console.
	Board Summary `json:"board_skew"`
	// Runner is |leftA - leftB| per crossing: the times the branches
	// left the barrier, as the runner measured them (late_us).
	Runner Summary `json:"runner_skew"`
	// Rounds summarizes the board skew of each block, in order.
	Rounds []Summary `json:"rounds,omitempty"`

	board, runner []time.Duration
}

// barrierSeq is the sequence of (u): branch a waits at the barrier for
// branch b, which comes about a millisecond later, so the one that waits
// is parked when the other releases it; right after the barrier each
// sends a numbered line on its own console.
func barrierSeq(n int) string {
	sync := func(dev string) string {
		return "  - send: echo sync\n    to: " + dev + "\n    expect: " + quoteYAML(syncReply) + "\n"
	}
	branch := func(name, before string) string {
		return fmt.Sprintf(`      %[1]s:
        - repeat: {count: %[2]d, as: i}
          steps:%[3]s
            - barrier: go
              timeout: 10s
            - send: "echo %[1]s${i}"
              to: %[1]s
              expect: %[4]s
`, name, n, before, quoteYAML(name+"${i}\r\n"+prompt))
	}
	return "name: barrier\nexpect_timeout: 10s\ndevices:\n  a: {}\n  b: {}\nsteps:\n" + sync("a") + sync("b") +
		"  - parallel:\n" + branch("a", "") + branch("b", "\n            - delay: 1ms")
}

// barrierRunner runs n crossings of barrierSeq on the board's consoles
// port (a) and port2 (b) and returns the runner's skew of each, from the
// barrier steps' late_us.
func barrierRunner(ctx context.Context, port, port2 string, n int) (childOutput, error) {
	res, err := runBound(ctx, barrierSeq(n), map[string]string{"a": port, "b": port2}, nil, "")
	if err != nil {
		return childOutput{}, err
	}
	late := map[string]map[int]int64{"a": {}, "b": {}}
	for _, s := range stepsOf(res, steps.KindBarrier) {
		k, _ := s.Data["crossing"].(int)
		l, _ := s.Data["late_us"].(int64)
		if late[s.Branch] == nil {
			return childOutput{}, fmt.Errorf("barrier step %s in branch %q", s.Path, s.Branch)
		}
		late[s.Branch][k] = l
	}
	var out childOutput
	for k := 1; k <= n; k++ {
		a, oka := late["a"][k]
		b, okb := late["b"][k]
		if !oka || !okb {
			return childOutput{}, fmt.Errorf("crossing %d: a barrier step is missing", k)
		}
		out.SamplesNs = append(out.SamplesNs, abs(time.Duration(a-b)*time.Microsecond).Nanoseconds())
	}
	return out, nil
}

// barriers runs scenario (u): blocks of crossings on fresh boards with
// two consoles, the sides alternating.
func (b *bencher) barriers(ctx context.Context) (*BarrierReport, error) {
	o := b.opts
	rep := &BarrierReport{N: o.BarrierN, Rounds: o.Rounds}
	type side struct {
		s     *BarrierSeries
		extra []string
	}
	sides := []side{{s: &BarrierSeries{Side: sideRunner}}}
	if o.Realtime {
		sides = append(sides, side{s: &BarrierSeries{Side: sideRunnerRT}, extra: []string{"-realtime"}})
	}
	for _, sd := range sides {
		sd.s.Command = "HILBENCH_CHILD=1 hilbench barrier-runner -serial PATH -serial2 PATH2 -n N" + strings.Join(append([]string{""}, sd.extra...), " ")
		rep.Sides = append(rep.Sides, sd.s)
	}
	for round, n := range split(o.BarrierN, o.Rounds) {
		for _, sd := range rotate(sides, round) {
			err := b.withConsoles(2, func(board *sim.Board) error {
				args := append([]string{"barrier-runner", "-serial", board.ConsolePath(0), "-serial2", board.ConsolePath(1), "-n", itoa(barrierWarmup + n)}, sd.extra...)
				out, _, err := b.run(ctx, kindHilrun, args, 10*time.Minute)
				if err != nil {
					return err
				}
				skews, err := boardSkews(board.Received(), barrierWarmup, n)
				if err != nil {
					return fmt.Errorf("%s: %w", sd.s.Side, err)
				}
				sd.s.board = append(sd.s.board, skews...)
				sd.s.runner = append(sd.s.runner, nanos(out.SamplesNs[barrierWarmup:])...)
				sum := summarize(skews)
				sd.s.Rounds = append(sd.s.Rounds, sum)
				b.progress("u: round %d/%d %-22s %4d crossings, board skew median %s, p99 %s", round+1, o.Rounds, sd.s.Side, n, us(sum.Median), us(sum.P99))
				return nil
			})
			if err != nil {
				return rep, fmt.Errorf("barriers: %w", err)
			}
		}
	}
	for _, s := range rep.Sides {
		s.Board, s.Runner = summarize(s.board), summarize(s.runner)
	}
	return rep, nil
}

// boardSkews returns, for crossings warmup .. warmup+n-1, how far apart
// the board received "echo aI" on its first console and "echo bI" on its
// second.
func boardSkews(lines []sim.RxLine, warmup, n int) ([]time.Duration, error) {
	at := [2]map[int]time.Time{{}, {}}
	for _, l := range lines {
		for c, prefix := range []string{"echo a", "echo b"} {
			if rest, ok := strings.CutPrefix(l.Line, prefix); ok && l.Console == c {
				if i, err := strconv.Atoi(rest); err == nil {
					at[c][i] = l.At
				}
			}
		}
	}
	var out []time.Duration
	for i := warmup; i < warmup+n; i++ {
		ta, oka := at[0][i]
		tb, okb := at[1][i]
		if !oka || !okb {
			return nil, fmt.Errorf("the board did not receive both lines of crossing %d", i)
		}
		out = append(out, abs(ta.Sub(tb)))
	}
	return out, nil
}

func (r *BarrierReport) markdown(b *strings.Builder) {
	fmt.Fprintf(b, "### (u) barrier skew on a board with two consoles\n\n")
	fmt.Fprintf(b, "%d crossings per side in %d alternating blocks, each a fresh board with two consoles and %d unmeasured crossings first. "+
		"A `parallel:` step of two branches, each a `repeat` of a `barrier: go` and a send of a numbered line (with its reply expected) on its own console; "+
		"branch b waits 1 ms before the barrier, so branch a is parked in it when b releases it. "+
		"Board skew: how far apart the board received the two lines sent right after a crossing. "+
		"Runner skew: how far apart the branches left the barrier, as the runner timed it (late_us, to the microsecond). Goal: board skew under 1 ms at the median.\n\n",
		r.N, r.Rounds, barrierWarmup)
	fmt.Fprintf(b, "| side | n | board skew median | p99 | max | runner skew median | p99 | max | met |\n")
	fmt.Fprintf(b, "|---|--:|--:|--:|--:|--:|--:|--:|---|\n")
	for _, s := range r.Sides {
		met := "no"
		if s.Board.N > 0 && s.Board.Median < time.Millisecond {
			met = "yes"
		}
		fmt.Fprintf(b, "| %s | %d | %s | %s | %s | %s | %s | %s | %s |\n", s.Side, s.Board.N,
			us(s.Board.Median), us(s.Board.P99), us(s.Board.Max), us(s.Runner.Median), us(s.Runner.P99), us(s.Runner.Max), met)
	}
	fmt.Fprintf(b, "\nOne block of each side, against a board started with `hilrun sim --consoles 2 --json`:\n\n")
	for _, s := range r.Sides {
		fmt.Fprintf(b, "    %s\n", s.Command)
	}
	b.WriteString("\n")
}

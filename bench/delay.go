// Scenario (c): the accuracy of delays between sends, as the board sees
// it.

package bench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/sim"
)

// delayWarmup is the number of unmeasured pairs at the start of each block
// of (c).
const delayWarmup = 3

// DelaySeries is one side's accuracy for one delay length in (c).
type DelaySeries struct {
	Delay   time.Duration `json:"delay_ns"`
	Side    string        `json:"side"`
	Command string        `json:"command"`
	// Errors are |gap - Delay|, where gap is the time between the arrivals
	// at the board of the lines sent before and after the delay.
	Errors Summary `json:"abs_error"`
	// Signed is gap - Delay: positive when late.
	Signed Summary `json:"signed_error"`
	// Client is the delay as the sending side measured it.
	Client Summary `json:"client"`
	// P90 is the 90th percentile of the absolute error.
	P90 time.Duration `json:"p90_abs_error_ns"`
	// Merged counts pairs whose two lines the board read at once: it did
	// not get to read the first line before the second was sent, so the
	// error equals the delay.
	Merged int `json:"merged"`
	// Rounds summarizes the absolute error of each alternating block, in
	// order, for the per-round ratios.
	Rounds []Summary `json:"rounds,omitempty"`
	// Hops breaks the error down by hop (Options.Hops), runner side only.
	Hops *HopReport `json:"hops,omitempty"`

	errs, signed, client []time.Duration
	pairs                [][]time.Duration // per pair: the hops of hopNames, then the signed error
	gcPairs              []bool
}

// DelayReport is scenario (c).
type DelayReport struct {
	N      int            `json:"n"`
	Rounds int            `json:"rounds"`
	Series []*DelaySeries `json:"series"`
}

// delaySide is one way of sending the pairs of scenario (c).
type delaySide struct {
	name    string
	command func(d time.Duration) string
	args    func(path string, d time.Duration, n int) (kind string, args []string)
}

func (b *bencher) delaySides() []delaySide {
	hil := func(name, mode string, extra ...string) delaySide {
		return delaySide{
			name: name,
			command: func(d time.Duration) string {
				return fmt.Sprintf("HILBENCH_CHILD=1 hilbench %s -serial PATH -delay %s -n N -warmup %d%s", mode, d, delayWarmup, strings.Join(append([]string{""}, extra...), " "))
			},
			args: func(path string, d time.Duration, n int) (string, []string) {
				return kindHilrun, append([]string{mode, "-serial", path, "-delay", d.String(), "-n", itoa(n), "-warmup", itoa(delayWarmup)}, extra...)
			},
		}
	}
	var runnerExtra []string
	if b.opts.Hops {
		runnerExtra = []string{"-hops"}
	}
	sides := []delaySide{hil(sideRunner, "delay-runner", runnerExtra...)}
	if b.opts.Realtime {
		sides = append(sides, hil(sideRunnerRT, "delay-runner", append(runnerExtra, "-realtime")...))
	}
	if b.opts.Python != "" {
		sides = append(sides, delaySide{
			name: sidePexpect,
			command: func(d time.Duration) string {
				return fmt.Sprintf("python3 bench/pexpect_delay.py PATH %d N %d", d.Microseconds(), delayWarmup)
			},
			args: func(path string, d time.Duration, n int) (string, []string) {
				return kindPython, []string{"pexpect_delay.py", path, strconv.FormatInt(d.Microseconds(), 10), itoa(n), itoa(delayWarmup)}
			},
		})
	}
	if b.opts.Device == DevicePython && b.opts.BoardPython != "" {
		sides = append(sides, delaySide{
			name: sidePySleep,
			command: func(d time.Duration) string {
				return fmt.Sprintf("python3 bench/py_delay.py PATH %d N %d", d.Microseconds(), delayWarmup)
			},
			args: func(path string, d time.Duration, n int) (string, []string) {
				return kindPyStdlib, []string{"py_delay.py", path, strconv.FormatInt(d.Microseconds(), 10), itoa(n), itoa(delayWarmup)}
			},
		})
	}
	if b.opts.Expect != "" {
		sides = append(sides, delaySide{
			name: sideExpect,
			command: func(d time.Duration) string {
				return fmt.Sprintf("expect bench/expect_delay.tcl PATH %d N %d", d.Microseconds(), delayWarmup)
			},
			args: func(path string, d time.Duration, n int) (string, []string) {
				return kindExpect, []string{"expect_delay.tcl", path, strconv.FormatInt(d.Microseconds(), 10), itoa(n), itoa(delayWarmup)}
			},
		})
	}
	if b.floor != "" {
		floor := delaySide{
			name: sideFloor,
			command: func(d time.Duration) string {
				return fmt.Sprintf("./floor delay PATH %d N %d", d.Microseconds(), delayWarmup)
			},
			args: func(path string, d time.Duration, n int) (string, []string) {
				return kindFloor, []string{"delay", path, strconv.FormatInt(d.Microseconds(), 10), itoa(n), itoa(delayWarmup)}
			},
		}
		sides = append(sides, floor)
		if b.opts.AA {
			floor.name = sideFloorAgain
			sides = append(sides, floor)
		}
	}
	for _, w := range waitVariants {
		if b.opts.WaitVariants || slices.Contains(b.opts.Waits, w.wait) {
			sides = append(sides, hil(w.name, "delay-console", "-wait", w.wait))
		}
	}
	return sides
}

// waitVariants are the diagnostic sides of (c), by their -wait name.
var waitVariants = []struct{ wait, name string }{
	{"gosched", waitGosched},
	{"yield", waitYield},
	{"sleep", waitSleep},
	{"nanosleep", waitNanosleep},
	{"abs", waitAbs},
	{"abs-poll", waitAbsPoll},
	{"abs-fifo", waitAbsFIFO},
}

// WaitNames lists the -wait names of the diagnostic sides of (c).
func WaitNames() []string {
	var out []string
	for _, w := range waitVariants {
		out = append(out, w.wait)
	}
	return out
}

// Names of the diagnostic sides of scenario (c).
const (
	waitGosched = "serialx + timer, then poll with Gosched for 1 ms (the runner's former wait)"
	waitYield   = "serialx + timer, then poll with sched_yield for 1 ms"
	waitSleep   = "serialx + time.Sleep"
	// waitNanosleep was the runner's wait from when it left Gosched
	// polling until it moved to one absolute sleep (waitAbs).
	waitNanosleep = "serialx + nanosleep (1 ns slack), then poll with sched_yield for 200 µs (the runner's former wait)"
	// waitAbs is the runner's wait; waitAbsFIFO the same as SCHED_FIFO,
	// as with hilrun run --realtime.
	waitAbs     = "serialx + absolute clock_nanosleep (1 ns slack), no polling"
	waitAbsPoll = "serialx + absolute clock_nanosleep to 80 µs before, then poll the clock without yielding (the runner's wait)"
	waitAbsFIFO = "serialx + absolute clock_nanosleep as SCHED_FIFO (--realtime)"
)

// delay runs scenario (c).
func (b *bencher) delay(ctx context.Context) (*DelayReport, error) {
	o := b.opts
	rounds := min(o.Rounds, o.DelayN)
	rep := &DelayReport{N: o.DelayN, Rounds: rounds}
	sides := b.delaySides()
	series := map[string]*DelaySeries{}
	key := func(side string, d time.Duration) string { return side + "@" + d.String() }
	for _, d := range o.Delays {
		for _, side := range sides {
			s := &DelaySeries{Delay: d, Side: side.name, Command: side.command(d)}
			series[key(side.name, d)] = s
			rep.Series = append(rep.Series, s)
		}
	}
	for round, n := range split(o.DelayN, rounds) {
		for _, d := range o.Delays {
			for _, side := range rotate(sides, round) {
				err := b.withDevice(ctx, func(board device) error {
					kind, args := side.args(board.SerialPath(), d, n)
					out, _, err := b.run(ctx, kind, args, 10*time.Minute)
					if err != nil {
						return err
					}
					log, err := board.Log()
					if err != nil {
						return err
					}
					gaps, err := pairGaps(log.Rx, delayWarmup, n)
					if err != nil {
						return fmt.Errorf("%s, %s: %w", side.name, d, err)
					}
					s := series[key(side.name, d)]
					var blockErrs []time.Duration
					for _, g := range gaps {
						if g == 0 {
							s.Merged++
						}
						s.signed = append(s.signed, g-d)
						s.errs = append(s.errs, abs(g-d))
						blockErrs = append(blockErrs, abs(g-d))
					}
					s.client = append(s.client, nanos(out.SleepNs)...)
					if len(out.Hops) > 0 {
						if err := s.addHops(log.Rx, out.Hops, delayWarmup, d); err != nil {
							return fmt.Errorf("%s, %s: %w", side.name, d, err)
						}
					}
					sum := summarize(blockErrs)
					s.Rounds = append(s.Rounds, sum)
					b.progress("c: round %d/%d %-14s delay %-6s %4d pairs, |error| median %s, p99 %s", round+1, rounds, side.name, d, n, us(sum.Median), us(sum.P99))
					return nil
				})
				if err != nil {
					return rep, fmt.Errorf("delay: %w", err)
				}
			}
		}
	}
	for _, s := range rep.Series {
		s.summarizeHops()
		s.Errors, s.Signed, s.Client = summarize(s.errs), summarize(s.signed), summarize(s.client)
		s.P90 = rank90(s.errs)
	}
	return rep, nil
}

// rank90 returns the nearest-rank 90th percentile of samples.
func rank90(samples []time.Duration) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	return rank(s, 0.90)
}

// pairGaps returns, for pairs warmup .. warmup+n-1, the time between the
// board's receipt of "echo aI" and of "echo bI".
func pairGaps(lines []sim.RxLine, warmup, n int) ([]time.Duration, error) {
	a := map[int]time.Time{}
	bs := map[int]time.Time{}
	for _, l := range lines {
		for prefix, m := range map[string]map[int]time.Time{"echo a": a, "echo b": bs} {
			if rest, ok := strings.CutPrefix(l.Line, prefix); ok {
				if i, err := strconv.Atoi(rest); err == nil {
					m[i] = l.At
				}
			}
		}
	}
	var gaps []time.Duration
	for i := warmup; i < warmup+n; i++ {
		ta, oka := a[i]
		tb, okb := bs[i]
		if !oka || !okb {
			return nil, fmt.Errorf("the board did not receive pair %d", i)
		}
		gaps = append(gaps, tb.Sub(ta))
	}
	return gaps, nil
}

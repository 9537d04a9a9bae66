// Scenario (a): send/expect round trips.

package bench

import (
	"context"
	"fmt"
	"time"
)

// RTTReport is scenario (a).
type RTTReport struct {
	N      int       `json:"n"`
	Rounds int       `json:"rounds"`
	Warmup int       `json:"warmup"`
	Sides  []*Series `json:"sides"`
}

// rtt runs scenario (a).
func (b *bencher) rtt(ctx context.Context) (*RTTReport, error) {
	o := b.opts
	rep := &RTTReport{N: o.N, Rounds: o.Rounds, Warmup: o.Warmup}
	names := []string{sideRunner, sideRunnerRegex, sideConsole}
	if o.Baseline != "" {
		names = append(names, sideBaseline)
	}
	if o.Python != "" {
		names = append(names, sidePexpect)
	}
	if o.Expect != "" {
		names = append(names, sideExpect)
	}
	if b.floor != "" {
		names = append(names, sideFloor)
		if o.AA {
			names = append(names, sideFloorAgain)
		}
	}
	series := map[string]*Series{}
	for _, name := range names {
		s := &Series{Side: name}
		series[name] = s
		rep.Sides = append(rep.Sides, s)
	}
	series[sideRunner].Command = "HILBENCH_CHILD=1 hilbench rtt-runner -serial PATH -n N -warmup W"
	series[sideRunnerRegex].Command = "HILBENCH_CHILD=1 hilbench rtt-runner-regex -serial PATH -n N -warmup W"
	series[sideConsole].Command = "HILBENCH_CHILD=1 hilbench rtt-console -serial PATH -n N -warmup W"
	if s := series[sideBaseline]; s != nil {
		s.Command = "HILBENCH_CHILD=1 BASELINE rtt-runner -serial PATH -n N -warmup W"
	}
	if s := series[sidePexpect]; s != nil {
		s.Command = "python3 bench/pexpect_rtt.py PATH N W"
	}
	if s := series[sideExpect]; s != nil {
		s.Command = "expect bench/expect_rtt.tcl PATH N W"
	}
	if s := series[sideFloor]; s != nil {
		s.Command = "cc -O2 -o floor bench/cfloor/floor.c && ./floor rtt PATH N W"
	}
	if s := series[sideFloorAgain]; s != nil {
		s.Command = series[sideFloor].Command
	}
	for round, n := range split(o.N, o.Rounds) {
		if n == 0 {
			continue
		}
		for _, name := range rotate(names, round) {
			err := b.withDevice(ctx, func(board device) error {
				path := board.SerialPath()
				var args []string
				kind := kindHilrun
				switch name {
				case sideRunner:
					args = []string{"rtt-runner", "-serial", path, "-n", itoa(n), "-warmup", itoa(o.Warmup)}
				case sideBaseline:
					kind, args = kindBaseline, []string{"rtt-runner", "-serial", path, "-n", itoa(n), "-warmup", itoa(o.Warmup)}
				case sideRunnerRegex:
					args = []string{"rtt-runner-regex", "-serial", path, "-n", itoa(n), "-warmup", itoa(o.Warmup)}
				case sideConsole:
					args = []string{"rtt-console", "-serial", path, "-n", itoa(n), "-warmup", itoa(o.Warmup)}
				case sidePexpect:
					kind, args = kindPython, []string{"pexpect_rtt.py", path, itoa(n), itoa(o.Warmup)}
				case sideExpect:
					kind, args = kindExpect, []string{"expect_rtt.tcl", path, itoa(n), itoa(o.Warmup)}
				case sideFloor, sideFloorAgain:
					kind, args = kindFloor, []string{"rtt", path, itoa(n), itoa(o.Warmup)}
				}
				out, rss, err := b.run(ctx, kind, args, 10*time.Minute)
				if err != nil {
					return err
				}
				if len(out.SamplesNs) != n {
					return fmt.Errorf("%s returned %d samples, want %d", name, len(out.SamplesNs), n)
				}
				s := series[name]
				s.Samples = append(s.Samples, nanos(out.SamplesNs)...)
				s.MaxRSSKiB = append(s.MaxRSSKiB, rss)
				sum := summarize(nanos(out.SamplesNs))
				s.Rounds = append(s.Rounds, sum)
				b.progress("a: round %d/%d %-14s %5d round trips, median %s, p99 %s", round+1, o.Rounds, name, n, us(sum.Median), us(sum.P99))
				return nil
			})
			if err != nil {
				return rep, fmt.Errorf("round trips: %w", err)
			}
		}
	}
	for _, s := range rep.Sides {
		s.Summary = summarize(s.Samples)
	}
	return rep, nil
}

package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/openocd"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/sim/jtag"
)

// Side names of scenarios (e) and (f).
const (
	sideSession = "hilrun session"
	sideProcess = "openocd per operation"
)

// memWarmup and procWarmup are the unmeasured reads that start each block
// of (e), through the persistent session and by a process per read.
const (
	memWarmup  = 20
	procWarmup = 2
)

// counterSeed is written to the firmware's millisecond counter before each
// block of (e), so that every word read can be checked: it must lie
// between the seed and the seed plus the milliseconds since.
const counterSeed = 0x10000000

// MemReport is scenario (e).
type MemReport struct {
	// N is the number of measured reads per hilrun side, ProcN by a
	// process per read.
	N      int `json:"n"`
	ProcN  int `json:"proc_n"`
	Rounds int `json:"rounds"`
	// Warmup and ProcWarmup are the unmeasured reads that start each block.
	Warmup     int       `json:"warmup"`
	ProcWarmup int       `json:"proc_warmup"`
	Sides      []*Series `json:"sides"`
	// Launch is how long starting the persistent OpenOCD took, until its
	// telnet server answered, once per block of the hilrun sides: what
	// hilrun pays once per run.
	Launch   Summary `json:"launch"`
	launches []time.Duration
}

// ToggleSeries is one side of scenario (f).
type ToggleSeries struct {
	Side    string `json:"side"`
	Command string `json:"command"`
	// Period holds the times between consecutive LED writes as the board
	// received them; Error is |period - Every|.
	Period Summary `json:"period"`
	Error  Summary `json:"abs_error"`
	// Off counts periods more than 1 ms away from Every.
	Off int `json:"off_by_more_than_1ms"`
	// Op is how long each write took as the sender measured it: the
	// mem_write step, or the OpenOCD process.
	Op Summary `json:"op"`
	// RunP99 is the p99 of |error| of each run.
	RunP99 []time.Duration `json:"run_p99_ns"`

	periods, errs, ops []time.Duration
}

// ToggleReport is scenario (f).
type ToggleReport struct {
	Periods int             `json:"periods"`
	Every   time.Duration   `json:"every_ns"`
	Reps    int             `json:"reps"`
	Sides   []*ToggleSeries `json:"sides"`
}

// jtagBoard is the virtual board's memory behind its JTAG port, with the
// OpenOCD configuration for it and, for the hilrun sides, a persistent
// OpenOCD attached.
type jtagBoard struct {
	mem    *sim.Memory
	srv    *jtag.Server
	dir    string
	ocd    *openocd.Process
	launch time.Duration
}

// withJTAGBoard runs fn with a fresh board memory served on a JTAG port;
// with launch it first starts OpenOCD against it as hilrun run --sim does
// (HOME a temporary directory, for OpenOCD's telnet history). The port
// serves one client at a time, so the per-operation sides get a board with
// no OpenOCD attached.
func withJTAGBoard(ctx context.Context, bin string, launch bool, fn func(b *jtagBoard) error) (err error) {
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	b := &jtagBoard{mem: sim.NewMemory()}
	b.srv, err = jtag.Serve(sctx, b.mem, "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("serve the board's JTAG port: %w", err)
	}
	defer func() { err = errors.Join(err, b.srv.Close()) }()
	if launch {
		b.dir, err = os.MkdirTemp("", "hilbench-jtag-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(b.dir)
		cfg := filepath.Join(b.dir, "board.cfg")
		if err := os.WriteFile(cfg, []byte(jtag.OpenOCDConfig(b.srv.Addr())), 0o644); err != nil {
			return err
		}
		t0 := time.Now()
		b.ocd, err = openocd.Launch(ctx, openocd.LaunchConfig{
			Binary: bin, Configs: []string{cfg}, Dir: b.dir, Env: []string{"HOME=" + b.dir},
			Procs: Gates.Procs, Dial: Gates.Dial,
		})
		if err != nil {
			return fmt.Errorf("launch openocd for the board: %w", err)
		}
		b.launch = time.Since(t0)
		defer func() { err = errors.Join(err, b.ocd.Stop()) }()
	}
	return fn(b)
}

// memSide is one way of reading memory in (e) or writing it in (f): a
// child mode that reaches the board through the persistent OpenOCD
// (launch) or by starting OpenOCD itself.
type memSide struct {
	name   string
	mode   string
	launch bool
	extra  []string
}

func (s memSide) args(b *jtagBoard, n int, bin string) []string {
	if s.launch {
		return append([]string{s.mode, "-openocd", b.ocd.TelnetAddr(), "-n", itoa(n)}, s.extra...)
	}
	return append([]string{s.mode, "-bitbang", b.srv.Addr(), "-openocd-bin", bin, "-n", itoa(n)}, s.extra...)
}

func (s memSide) command() string {
	where := " -bitbang HOST:PORT"
	if s.launch {
		where = " -openocd HOST:PORT"
	}
	return strings.Join(append([]string{"HILBENCH_CHILD=1 hilbench " + s.mode + where + " -n N"}, s.extra...), " ")
}

// The diagnostic sides of (e) and (f).
const (
	sideTelnet       = "bare telnet mdw (diagnostic)"
	sideTelnetPadded = "bare telnet mdw, line as long as hilrun's (diagnostic)"
	sideTelnetToggle = "bare telnet mww (diagnostic)"
)

// memLatency runs scenario (e).
func (b *bencher) memLatency(ctx context.Context) (*MemReport, error) {
	o := b.opts
	rounds := min(o.MemRounds, o.MemN, o.MemProcN)
	rep := &MemReport{N: o.MemN, ProcN: o.MemProcN, Rounds: rounds, Warmup: memWarmup, ProcWarmup: procWarmup}
	sides := []memSide{
		{sideSession, "mem-session", true, nil},
		{sideRunner, "mem-runner", true, nil},
		{sideProcess, "mem-process", false, nil},
		{sideTelnet, "mem-telnet", true, nil},
		{sideTelnetPadded, "mem-telnet", true, []string{"-pad"}},
	}
	series := map[string]*Series{}
	for _, side := range sides {
		s := &Series{Side: side.name, Command: side.command() + " -warmup W"}
		series[side.name] = s
		rep.Sides = append(rep.Sides, s)
	}
	hil, proc := split(o.MemN, rounds), split(o.MemProcN, rounds)
	for round := range rounds {
		for _, side := range rotate(sides, round) {
			n, warmup := hil[round], memWarmup
			if !side.launch {
				n, warmup = proc[round], procWarmup
			}
			err := withJTAGBoard(ctx, o.OpenOCD, side.launch, func(jb *jtagBoard) error {
				if side.launch {
					rep.launches = append(rep.launches, jb.launch)
				}
				if err := jb.mem.Write(memAddr, 32, counterSeed); err != nil {
					return err
				}
				seeded := time.Now()
				args := append(side.args(jb, n, o.OpenOCD), "-warmup", itoa(warmup))
				out, rss, err := b.side(ctx, false, args, 10*time.Minute)
				if err != nil {
					return err
				}
				if len(out.SamplesNs) != n || len(out.Values) != n {
					return fmt.Errorf("%s returned %d samples and %d values, want %d", side.name, len(out.SamplesNs), len(out.Values), n)
				}
				if err := checkCounter(out.Values, time.Since(seeded)); err != nil {
					return fmt.Errorf("%s: %w", side.name, err)
				}
				s := series[side.name]
				s.Samples = append(s.Samples, nanos(out.SamplesNs)...)
				s.MaxRSSKiB = append(s.MaxRSSKiB, rss)
				sum := summarize(nanos(out.SamplesNs))
				b.progress("e: round %d/%d %-22s %4d reads, median %s, p99 %s", round+1, rounds, side.name, n, us(sum.Median), us(sum.P99))
				return nil
			})
			if err != nil {
				return rep, fmt.Errorf("memory reads: %w", err)
			}
		}
	}
	for _, s := range rep.Sides {
		s.Summary = summarize(s.Samples)
	}
	rep.Launch = summarize(rep.launches)
	return rep, nil
}

// checkCounter checks words read from the firmware's millisecond counter
// after it was seeded with counterSeed elapsed ago: each lies between the
// seed and the seed plus the elapsed milliseconds, and none goes back.
func checkCounter(vals []uint64, elapsed time.Duration) error {
	hi := uint64(counterSeed) + uint64(elapsed/time.Millisecond) + 1
	var last uint64
	for i, v := range vals {
		if v < counterSeed || v > hi {
			return fmt.Errorf("read %d: the counter read 0x%08x, want 0x%08x to 0x%08x", i, v, counterSeed, hi)
		}
		if v < last {
			return fmt.Errorf("read %d: the counter went back from 0x%08x to 0x%08x", i, last, v)
		}
		last = v
	}
	return nil
}

// memToggle runs scenario (f).
func (b *bencher) memToggle(ctx context.Context) (*ToggleReport, error) {
	o := b.opts
	rep := &ToggleReport{Periods: o.ToggleN, Every: o.ToggleEvery, Reps: o.ToggleReps}
	sides := []memSide{
		{sideRunner, "toggle-runner", true, nil},
		{sideProcess, "toggle-process", false, nil},
		{sideTelnetToggle, "toggle-telnet", true, nil},
	}
	series := map[string]*ToggleSeries{}
	for _, side := range sides {
		s := &ToggleSeries{Side: side.name, Command: side.command() + " -every " + o.ToggleEvery.String()}
		series[side.name] = s
		rep.Sides = append(rep.Sides, s)
	}
	for round := range o.ToggleReps {
		for _, side := range rotate(sides, round) {
			err := withJTAGBoard(ctx, o.OpenOCD, side.launch, func(jb *jtagBoard) error {
				args := append(side.args(jb, o.ToggleN, o.OpenOCD), "-every", o.ToggleEvery.String())
				out, _, err := b.side(ctx, false, args, 10*time.Minute+time.Duration(o.ToggleN)*o.ToggleEvery)
				if err != nil {
					return err
				}
				periods, err := ledPeriods(jb.mem.Writes(), o.ToggleN)
				if err != nil {
					return fmt.Errorf("%s: %w", side.name, err)
				}
				s := series[side.name]
				var errs []time.Duration
				for _, p := range periods {
					e := abs(p - o.ToggleEvery)
					errs = append(errs, e)
					if e > time.Millisecond {
						s.Off++
					}
				}
				s.periods = append(s.periods, periods...)
				s.errs = append(s.errs, errs...)
				s.ops = append(s.ops, nanos(out.SamplesNs)...)
				es, ps := summarize(errs), summarize(periods)
				s.RunP99 = append(s.RunP99, es.P99)
				b.progress("f: run %d/%d %-22s %d periods of %s, mean %s, |error| median %s, p99 %s, max %s", round+1, o.ToggleReps, side.name,
					len(periods), o.ToggleEvery, us(ps.Mean), us(es.Median), us(es.P99), us(es.Max))
				return nil
			})
			if err != nil {
				return rep, fmt.Errorf("LED toggle: %w", err)
			}
		}
	}
	for _, s := range rep.Sides {
		s.Period, s.Error, s.Op = summarize(s.periods), summarize(s.errs), summarize(s.ops)
	}
	return rep, nil
}

// ledPeriods returns the times between consecutive writes of the LED's set
// and reset register as the board received them. It expects n+1 writes
// alternating set and reset, starting with set.
func ledPeriods(writes []sim.WriteEvent, n int) ([]time.Duration, error) {
	var led []sim.WriteEvent
	for _, w := range writes {
		if w.Addr == ledReg {
			led = append(led, w)
		}
	}
	if len(led) != n+1 {
		return nil, fmt.Errorf("the board received %d LED writes, want %d", len(led), n+1)
	}
	var periods []time.Duration
	for i, w := range led {
		want := uint32(ledSet)
		if i%2 == 1 {
			want = ledReset
		}
		if w.Value != want || w.Width != 32 {
			return nil, fmt.Errorf("LED write %d was 0x%x (%d bits), want 0x%x (32 bits)", i, w.Value, w.Width, want)
		}
		if i > 0 {
			periods = append(periods, w.At.Sub(led[i-1].At))
		}
	}
	return periods, nil
}

// openocdVersion returns the version line OpenOCD prints, or "".
func openocdVersion(ctx context.Context, bin string) string {
	out, _ := exec.CommandContext(ctx, bin, "--version").CombinedOutput()
	line, _, _ := strings.Cut(string(out), "\n")
	return strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "Open On-Chip Debugger"))
}

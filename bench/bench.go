// Package bench measures hilrun on its virtual board, side by side with
// Python's pexpect on the same kind of device:
//
//   - (a) send/expect round trips,
//   - (b) finding a pattern at the end of a long stream, speed and peak
//     memory,
//   - (c) the accuracy of delays between sends, as the device sees it,
//   - (d) a full-speed stream logged with no byte lost,
//   - (l) a line sent on a fixed period (repeat every:), as the device
//     sees it,
//   - (u) how far apart a barrier releases the branches of a parallel:
//     step, on a board with two consoles,
//   - (v) the time between steps: N send/expect steps run by the hilrun
//     binary as CI runs it, by its own clock and as the board saw it,
//
// with two more peers in (a), (c) and (l): Tcl expect (bench/expect_*.tcl)
// and a minimal C client (bench/cfloor/floor.c: write, poll, read, and
// absolute clock_nanosleep), compiled with the system's cc, which is the
// floor any client pays on the machine;
//
// and its memory access through the real OpenOCD driving the board's JTAG
// port, side by side with running OpenOCD once per operation:
//
//   - (e) the latency of one 32-bit read,
//   - (f) the LED toggled on a fixed period, as the board saw it.
//
// (a), (c), (l) and (v) run on the Go virtual board or, with
// Options.Device, on a board that is not hilrun's: bench/pyboard.py, a
// Python shell on a pty that stamps lines and replies with its own clock.
//
// The virtual board runs in the calling process. Every measured side, the
// hilrun ones included, runs in a child process of its own (see ChildEnv
// and the embedded pexpect_*.py scripts) that opens the board's pty like any
// serial port, or reaches its memory through OpenOCD, so both sides pay the
// same process and pty costs and each one's peak memory can be read from
// the kernel. Blocks of the sides are alternated so that noise on a shared
// machine hits them all.
//
// cmd/hilbench runs it and prints a Markdown report.
package bench

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"time"
)

//go:embed pexpect_*.py py_*.py pyboard.py expect_*.tcl cfloor/floor.c
var scripts embed.FS

// Scenario names, as -only takes them.
const (
	RoundTrip = "a"
	Search    = "b"
	Delay     = "c"
	Lossless  = "d"
	MemRead   = "e"
	MemToggle = "f"
	Period    = "l"
	Barrier   = "u"
	Gap       = "v"
)

// Scenarios lists every scenario, in the order Run runs them.
var Scenarios = []string{RoundTrip, Search, Delay, Lossless, MemRead, MemToggle, Period, Barrier, Gap}

// Side names.
const (
	sideRunner = "hilrun run"
	// sideRunnerRegex is (a)'s runner expecting a regexp a delimiter ends.
	sideRunnerRegex = "hilrun run, regex"
	sideConsole     = "hilrun serialx"
	// sideRunnerRT is the runner as hilrun run --realtime runs it.
	sideRunnerRT = "hilrun run --realtime"
	sidePexpect  = "pexpect"
	// sidePySleep is (c)'s pairs in plain Python, time.sleep between
	// the writes (bench/py_delay.py).
	sidePySleep = "Python time.sleep"
	// sideExpect is Tcl expect (bench/expect_*.tcl), sideFloor the C
	// client (bench/floor.c): write, poll, read and absolute sleeps, the
	// least any client pays on the machine.
	sideExpect = "Tcl expect"
	sideFloor  = "C client (floor)"
	// sideGoLoop is (l)'s diagnostic Go loop of the C client's system
	// calls (see everyGo).
	sideGoLoop = "Go loop (diagnostic)"
	// sideGoLoopPoller is that loop with the port in Go's poller, and
	// sideGoLoopInput with the port watched for input only, as hilrun's
	// console watches it.
	sideGoLoopPoller = "Go loop, port in Go's poller (diagnostic)"
	sideGoLoopInput  = "Go loop, port watched for input only (diagnostic)"
	// sideBaseline is hilrun run in a hilbench built from another commit
	// (Options.Baseline).
	sideBaseline = "hilrun run, baseline build"
	// sideFloorAgain is a second C client in the same rounds (Options.AA):
	// its verdict against the first is what noise alone makes of a verdict.
	sideFloorAgain = "C client again (A/A)"
	// sideGoLoopAgain is a second Go loop in (l)'s rounds (Options.GoLoop
	// and Options.AA): the A/A test of verdicts against the Go loop.
	sideGoLoopAgain = "Go loop again (A/A)"
)

// Report is the outcome of a run. Scenarios not run are nil.
type Report struct {
	Env      Env            `json:"env"`
	Command  string         `json:"command,omitempty"`
	Started  time.Time      `json:"started"`
	Finished time.Time      `json:"finished"`
	RTT      *RTTReport     `json:"rtt,omitempty"`
	Search   *SearchReport  `json:"search,omitempty"`
	Delay    *DelayReport   `json:"delay,omitempty"`
	Stream   *StreamReport  `json:"stream,omitempty"`
	Mem      *MemReport     `json:"mem,omitempty"`
	Toggle   *ToggleReport  `json:"toggle,omitempty"`
	Period   *PeriodReport  `json:"period,omitempty"`
	Barrier  *BarrierReport `json:"barrier,omitempty"`
	Gap      *GapReport     `json:"gap,omitempty"`
	// Runs are the runs of Options.Runs, when more than one: each has
	// its scenarios' reports, and this report none of its own.
	Runs []*Report `json:"runs,omitempty"`
	// Goals are the goals' verdicts, over the runs.
	Goals []Goal `json:"goals,omitempty"`
}

// WriteJSON writes v, a Report or a TclReport, as indented JSON with a
// final newline to the file at path: the figures the commands under
// bench/cmd write with -json.
func WriteJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// Series is one side's samples of a latency scenario.
type Series struct {
	Side    string          `json:"side"`
	Command string          `json:"command"`
	Summary Summary         `json:"summary"`
	Samples []time.Duration `json:"-"`
	// Rounds summarizes each alternating block, in order, for the
	// per-round ratios.
	Rounds []Summary `json:"rounds,omitempty"`
	// MaxRSSKiB is the peak resident memory of each block's process.
	MaxRSSKiB []int64 `json:"max_rss_kib"`
}

// Run runs the scenarios of opts, one after the other, and returns their
// report. It fails on the first side that cannot be measured.
func Run(ctx context.Context, opts Options) (*Report, error) {
	opts.defaults()
	// The board runs in this process. A thread coming back from a system
	// call (the board's reader, woken by a line) needs an idle P before it
	// runs Go code again: with as many Ps as CPUs, a busy P or two (the
	// GC, the copying of a side's output) can keep it waiting for the
	// scheduler. Spare Ps keep the instrument from adding to the tail; the
	// measured sides run with their defaults.
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(max(8, runtime.NumCPU())))
	rep := &Report{Started: time.Now(), Command: opts.Command}
	if opts.WorkDir == "" {
		dir, err := os.MkdirTemp("", "hilbench-")
		if err != nil {
			return nil, fmt.Errorf("create a work directory: %w", err)
		}
		defer os.RemoveAll(dir)
		opts.WorkDir = dir
	}
	if err := writeScripts(opts.WorkDir); err != nil {
		return nil, err
	}
	b := &bencher{opts: opts, rep: rep}
	if opts.CC != "" {
		b.floor = filepath.Join(opts.WorkDir, "floor")
		out, err := exec.CommandContext(ctx, opts.CC, "-O2", "-o", b.floor, filepath.Join(opts.WorkDir, "floor.c")).CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("compile the C client with %s: %w: %s", opts.CC, err, lastLines(string(out), 5))
		}
	}
	rep.Env = b.env(ctx)
	only := func(s string) bool { return len(opts.Only) == 0 || slices.Contains(opts.Only, s) }
	var err error
	if only(MemRead) || only(MemToggle) {
		if _, lerr := exec.LookPath(opts.OpenOCD); lerr != nil {
			err = fmt.Errorf("scenarios e and f need OpenOCD (apt-get install openocd; -only a,b,c,d leaves them out): %w", lerr)
		}
	}
	if only(Gap) && err == nil {
		b.hilrun, err = hilrunBinary(ctx, opts)
	}
	if err == nil && opts.Runs == 1 {
		err = b.scenarios(ctx, rep, only)
	}
	for i := 0; err == nil && opts.Runs > 1 && i < opts.Runs; i++ {
		b.progress("run %d of %d", i+1, opts.Runs)
		sub := &Report{Started: time.Now()}
		err = b.scenarios(ctx, sub, only)
		sub.Finished = time.Now()
		rep.Runs = append(rep.Runs, sub)
	}
	if runs := rep.Runs; len(runs) > 0 {
		rep.Goals = goals(runs)
	} else {
		rep.Goals = goals([]*Report{rep})
	}
	rep.Env.LoadAfter = loadAvg()
	rep.Finished = time.Now()
	return rep, err
}

// scenarios runs, one after the other, the scenarios only admits, into r.
func (b *bencher) scenarios(ctx context.Context, r *Report, only func(string) bool) error {
	var err error
	if only(RoundTrip) && err == nil {
		r.RTT, err = b.rtt(ctx)
	}
	if only(Search) && err == nil {
		r.Search, err = b.search(ctx)
	}
	if only(Delay) && err == nil {
		r.Delay, err = b.delay(ctx)
	}
	if only(Lossless) && err == nil {
		r.Stream, err = b.lossless(ctx)
	}
	if only(MemRead) && err == nil {
		r.Mem, err = b.memLatency(ctx)
	}
	if only(MemToggle) && err == nil {
		r.Toggle, err = b.memToggle(ctx)
	}
	if only(Period) && err == nil {
		r.Period, err = b.periods(ctx)
	}
	if only(Barrier) && err == nil {
		r.Barrier, err = b.barriers(ctx)
	}
	if only(Gap) && err == nil {
		r.Gap, err = b.gaps(ctx)
	}
	return err
}

// writeScripts writes the embedded scripts and the C client's source into
// dir, each under its base name.
func writeScripts(dir string) error {
	return fs.WalkDir(scripts, ".", func(name string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		data, _ := scripts.ReadFile(name)
		if err := os.WriteFile(filepath.Join(dir, path.Base(name)), data, 0o755); err != nil {
			return fmt.Errorf("write %s: %w", path.Base(name), err)
		}
		return nil
	})
}

type bencher struct {
	opts Options
	rep  *Report
	// floor is the compiled C client, "" without a C compiler.
	floor string
	// hilrun is the hilrun executable of (v).
	hilrun string
}

func (b *bencher) progress(format string, args ...any) {
	fmt.Fprintf(b.opts.Progress, format+"\n", args...)
}

// Command hilbench measures hilrun on the virtual board against Python's
// pexpect (serial console) and against running OpenOCD once per operation
// (memory access), and prints a Markdown report; see package bench.
//
//	go run ./bench/cmd/hilbench [-only a,b,c,d,e,f,l,u,v] [-device go|python] [-runs N] [-n 2000] [-out FILE]
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"slices"
	"strings"
	"time"

	"github.com/hilrun/hilrun/bench"
)

func main() {
	if os.Getenv(bench.ChildEnv) != "" {
		os.Exit(bench.ChildMain(os.Args[1:], os.Stdout, os.Stderr))
	}
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	o, ok := parseFlags(args, stderr)
	if !ok {
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if !findTools(ctx, &o.opts, o.noPy, o.noPeers, stderr) {
		return 2
	}
	o.opts.Command = "go run ./bench/cmd/hilbench " + strings.Join(args, " ")
	o.opts.Progress = stderr

	rep, err := bench.Run(ctx, o.opts)
	if rep != nil {
		if code := writeReport(rep, o.out, o.jsonOut, stdout, stderr); code != 0 {
			return code
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "hilbench: %v\n", err)
		return 1
	}
	return 0
}

// options are what hilbench's flags ask for: the run's options, where its
// report goes, and the flags that become bench.Options once parsed.
type options struct {
	opts                bench.Options
	out, jsonOut        string
	noPy, noPeers       bool
	only, delays, waits string
}

// parseFlags parses hilbench's flags. It reports a bad one on stderr and
// returns false.
func parseFlags(args []string, stderr io.Writer) (*options, bool) {
	o := &options{}
	if err := newFlagSet(o, stderr).Parse(args); err != nil {
		return nil, false
	}
	var ok bool
	if o.opts.Waits, ok = listFlag(stderr, "waits", o.waits, "wait", bench.WaitNames(), strings.Join(bench.WaitNames(), ", ")); !ok {
		return nil, false
	}
	if !slices.Contains(bench.Devices, o.opts.Device) {
		fmt.Fprintf(stderr, "hilbench: -device: unknown device %q (want %s)\n", o.opts.Device, strings.Join(bench.Devices, " or "))
		return nil, false
	}
	if o.opts.Only, ok = listFlag(stderr, "only", o.only, "scenario", bench.Scenarios, "a, b, c, d, e, f, l, u or v"); !ok {
		return nil, false
	}
	for _, s := range strings.Split(o.delays, ",") {
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil || d <= 0 {
			fmt.Fprintf(stderr, "hilbench: -delays: %q is not a positive duration\n", s)
			return nil, false
		}
		o.opts.Delays = append(o.opts.Delays, d)
	}
	return o, true
}

// newFlagSet returns hilbench's flags, which parsing sets in o.
func newFlagSet(o *options, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("hilbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	opts := &o.opts
	fs.StringVar(&o.only, "only", "", "run only these scenarios, comma-separated: a (round trip), b (search), c (delay), d (lossless log), e (memory read), f (LED toggle), l (send period), u (barrier skew), v (time between steps)")
	fs.StringVar(&o.out, "out", "", "write the Markdown report to `FILE` instead of standard output")
	fs.StringVar(&o.jsonOut, "json", "", "also write the report's figures as JSON to `FILE`")
	fs.StringVar(&o.delays, "delays", "1ms,10ms,100ms", "delay lengths of scenario c, comma-separated")
	fs.BoolVar(&o.noPy, "no-pexpect", false, "measure hilrun only")
	fs.BoolVar(&o.noPeers, "no-peers", false, "leave out the Tcl expect and C client sides of a, c and l")
	fs.IntVar(&opts.N, "n", 2000, "measured round trips per side (a)")
	fs.IntVar(&opts.Rounds, "rounds", 4, "alternating blocks per side (a, c)")
	fs.IntVar(&opts.Warmup, "warmup", 50, "unmeasured round trips per block (a)")
	fs.Int64Var(&opts.SearchSize, "size", 25_000_000, "stream length in bytes (b)")
	fs.Int64Var(&opts.SmallSize, "small", 0, "shorter stream for regexp searches (b); 0 means size/10")
	fs.IntVar(&opts.SearchReps, "reps", 3, "runs of each search (b)")
	fs.DurationVar(&opts.Limit, "limit", 180*time.Second, "time limit of each search (b)")
	fs.IntVar(&opts.DelayN, "delay-n", 300, "measured delays per side and length (c)")
	fs.DurationVar(&opts.StreamFor, "for", 10*time.Second, "how long to stream (d)")
	fs.Int64Var(&opts.StreamChunk, "chunk", 20_000_000, "bytes per stream command (d)")
	fs.BoolVar(&opts.WaitVariants, "wait-variants", false, "add diagnostic sides to c: a serialx console waiting with the runner's wait (one absolute clock_nanosleep), the same as SCHED_FIFO, its former ones (nanosleep then sched_yield polling; Gosched polling), sched_yield polling, time.Sleep")
	fs.BoolVar(&opts.Hops, "hops", false, "diagnostic for c: record when each pair of the runner's side passes each hop (send, delay start, wake-up, delay end, next send) and show where the error goes")
	fs.BoolVar(&opts.BoardNormal, "board-normal", false, "read the board's console at normal priority (by default at SCHED_FIFO when permitted, so the board stamps lines when they arrive)")
	fs.BoolVar(&opts.GoLoop, "go-loop", false, "add to l a diagnostic side: a Go loop making the C client's system calls (absolute clock_nanosleep, write, drain) without hilrun, which tells the Go runtime's share of the period error from hilrun's")
	fs.BoolVar(&opts.GoLoopPoller, "go-loop-poller", false, "add to l the Go loop twice more: with the port registered with Go's poller and written through it (the difference is what the poller's wake-ups cost a board on the same machine), and with the port watched for input only, as hilrun's console watches it")
	fs.StringVar(&opts.Baseline, "baseline", "", "a hilbench `executable` built from another commit: a, b and l run its hilrun side too, in the same rounds, with hilrun's verdicts against it (an A/B test of a change)")
	fs.BoolVar(&opts.AA, "aa", false, "add an A/A test: a second C client to a, c and l and a second raw read to b, in the same rounds as the first, whose verdicts against the first show how far noise alone moves a verdict in this run")
	fs.BoolVar(&opts.Realtime, "realtime", false, "add to c and l the runner's side as hilrun run --realtime runs it (SCHED_FIFO waits, locked memory)")
	fs.IntVar(&opts.GapN, "gap-n", 300, "send/expect steps per side and round (v)")
	fs.StringVar(&opts.Hilrun, "hilrun", "", "hilrun `executable` that v runs (default: go build ./cmd/hilrun into the work directory)")
	fs.IntVar(&opts.Runs, "runs", 1, "repeat the scenarios `N` times and report each goal's median verdict over the runs with its min-max band")
	fs.IntVar(&opts.BarrierN, "barrier-n", 300, "measured barrier crossings per side (u)")
	fs.IntVar(&opts.MemN, "mem-n", 500, "measured reads per hilrun side (e)")
	fs.IntVar(&opts.MemProcN, "mem-proc-n", 100, "measured reads by an OpenOCD process each (e)")
	fs.IntVar(&opts.MemRounds, "mem-rounds", 8, "alternating blocks per side (e)")
	fs.IntVar(&opts.ToggleN, "toggle-n", 200, "LED periods per run (f)")
	fs.DurationVar(&opts.ToggleEvery, "toggle-every", 10*time.Millisecond, "LED period (f)")
	fs.IntVar(&opts.ToggleReps, "toggle-reps", 3, "runs of each side (f)")
	fs.IntVar(&opts.PeriodN, "period-n", 400, "periods per side (l)")
	fs.DurationVar(&opts.PeriodEvery, "period-every", 10*time.Millisecond, "period of the timed sends (l)")
	fs.StringVar(&opts.OpenOCD, "openocd", "openocd", "OpenOCD executable (e, f)")
	fs.StringVar(&opts.Expect, "expect", "expect", "Tcl expect `executable` for the Tcl expect sides of a and c")
	fs.StringVar(&opts.CC, "cc", "cc", "C `compiler` that builds the C client, the floor of a, c and l")
	fs.StringVar(&opts.Python, "python", "", "Python interpreter with pexpect (default: the first of python3 on PATH and "+bench.DebianPython+" that can import pexpect)")
	fs.StringVar(&opts.Device, "device", bench.DeviceGo, "the board of a, c, l and v: go (hilrun's virtual board) or python (bench/pyboard.py, a Python shell on a pty, run with the -python interpreter or python3)")
	fs.StringVar(&opts.WorkDir, "workdir", "", "keep the pexpect scripts here (default: a temporary directory)")
	fs.StringVar(&o.waits, "waits", "", "add only these diagnostic sides to c, comma-separated: "+strings.Join(bench.WaitNames(), ", "))
	return fs
}

// listFlag returns the items of the comma-separated value of flag -name,
// each trimmed and one of valid; "" gives none. It reports the first that
// is not, an unknown what, on stderr with the values it wants, and returns
// false.
func listFlag(stderr io.Writer, name, value, what string, valid []string, want string) ([]string, bool) {
	if value == "" {
		return nil, true
	}
	var items []string
	for _, s := range strings.Split(value, ",") {
		if s = strings.TrimSpace(s); !slices.Contains(valid, s) {
			fmt.Fprintf(stderr, "hilbench: -%s: unknown %s %q (want %s)\n", name, what, s, want)
			return nil, false
		}
		items = append(items, s)
	}
	return items, true
}

// findTools settles the peers of the run in opts: the pexpect interpreter
// (found when none was named) and the Tcl expect and C compiler
// executables, each left out when -no-pexpect or -no-peers says so or
// when no scenario that runs needs it. A tool that is needed and missing
// is reported on stderr, and findTools returns false.
func findTools(ctx context.Context, opts *bench.Options, noPy, noPeers bool, stderr io.Writer) bool {
	needPy := len(opts.Only) == 0
	for _, s := range opts.Only {
		needPy = needPy || s == bench.RoundTrip || s == bench.Search || s == bench.Delay
	}
	needPeers := needPy || slices.Contains(opts.Only, bench.Period) || slices.Contains(opts.Only, bench.Gap)
	switch {
	case noPy || !needPy:
		opts.Python = ""
	case opts.Python == "":
		py, err := bench.FindPython(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "hilbench: %v; -no-pexpect measures hilrun alone\n", err)
			return false
		}
		opts.Python = py
	}
	if opts.Python != "" {
		fmt.Fprintf(stderr, "hilbench: pexpect sides run with %s\n", opts.Python)
	}
	if !findBoardPython(opts, stderr) {
		return false
	}
	// The peers are the floor and the other runner the goals of a, c and l
	// are set against: a missing tool is an error, as a missing pexpect is.
	if noPeers || !needPeers {
		opts.Expect, opts.CC = "", ""
	}
	for _, tool := range []*string{&opts.Expect, &opts.CC} {
		if *tool == "" {
			continue
		}
		p, err := exec.LookPath(*tool)
		if err != nil {
			fmt.Fprintf(stderr, "hilbench: %v (apt-get install expect gcc); -no-peers leaves the Tcl expect and C sides out\n", err)
			return false
		}
		*tool = p
	}
	return true
}

// writeReport writes rep as Markdown to the file out, or to stdout when
// out is "", and its figures as JSON to the file jsonOut unless it is "".
// It returns the exit code of a failure, or 0.
func writeReport(rep *bench.Report, out, jsonOut string, stdout, stderr io.Writer) int {
	w := stdout
	if out != "" {
		f, err := os.Create(out)
		if err != nil {
			fmt.Fprintf(stderr, "hilbench: %v\n", err)
			return 1
		}
		defer f.Close()
		w = f
	}
	if err := rep.WriteMarkdown(w); err != nil {
		fmt.Fprintf(stderr, "hilbench: write the report: %v\n", err)
		return 1
	}
	if jsonOut != "" {
		if err := bench.WriteJSON(jsonOut, rep); err != nil {
			fmt.Fprintf(stderr, "hilbench: %v\n", err)
			return 1
		}
	}
	return 0
}

// findBoardPython settles the interpreter of the Python board and of the
// standard-library Python sides, which need no pexpect: the pexpect
// interpreter when there is one, else python3 on PATH. Only -device
// python needs one; without it that is reported on stderr and
// findBoardPython returns false.
func findBoardPython(opts *bench.Options, stderr io.Writer) bool {
	if opts.Device != bench.DevicePython {
		return true
	}
	if opts.BoardPython = opts.Python; opts.BoardPython == "" {
		p, err := exec.LookPath("python3")
		if err != nil {
			fmt.Fprintf(stderr, "hilbench: -device python: %v\n", err)
			return false
		}
		opts.BoardPython = p
	}
	fmt.Fprintf(stderr, "hilbench: the Python board runs with %s\n", opts.BoardPython)
	return true
}

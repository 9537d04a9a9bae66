package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/qemu"
	"github.com/hilrun/hilrun/pkg/report"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/steps"
)

// RunOptions are the inputs of hilrun run.
type RunOptions struct {
	Files  []string
	JUnit  string
	JSON   string
	HTML   string
	Allure string
	// Measurements is --measurements: a CSV of every measurement.
	Measurements string
	LogDir       string
	Vars         []string
	// BindFlags are --port and --probe (--openocd, --gdb).
	BindFlags
	Bench   string
	Sim     bool
	QEMU    QEMUFlags
	Verbose bool
	// Filter selects sequences by name, file name and group names (-k).
	Filter string
	// List prints the sequences that would run, and runs none.
	List bool
	// Select is -m and --quarantine.
	Select SelectOptions
	// Shard is --shard I/N: run the I-th of N balanced shares of the
	// selected sequence files.
	Shard string
	// Durations is a JSON report of a previous run whose sequence times
	// balance the shards.
	Durations string
	// Realtime asks for SCHED_FIFO timed waits and locked memory
	// (runner.EnableRealtime); what is refused is said, and the run goes on.
	Realtime bool
	// MaxValue bounds each variable and saved value, in bytes; 0 means
	// runner.DefaultMaxValueBytes.
	MaxValue int
	// Expr bounds each evaluation of an expression.
	Expr ExprFlags
	// MaxFailures caps the failing iterations each repeat lists in the
	// reports; 0 means results.DefaultMaxFailures.
	MaxFailures int
	// ExitFirst starts no more sequences once one did not pass (-x, as in
	// pytest); with --pool it is --pool-fail-fast.
	ExitFirst bool

	info report.RunInfo // for the HTML report and Allure
	// consoleRoot holds the console logs of a run without --log-dir for
	// the HTML report and Allure: a private folder, gone at exit.
	consoleRoot string
	// shard is what the reports say of a --shard run's share.
	shard *report.Shard
	// Pool runs the sequences in parallel on the benches of a pool file.
	Pool PoolOptions
	// Retry is --retries and --fail-on-flaky.
	Retry RetryFlags
	// NoRecover leaves out the benches' health checks and recovery
	// ladders (--recover=false).
	NoRecover bool
}

func newRunCmd(ios *IO) *cobra.Command {
	opts := &RunOptions{}
	cmd := &cobra.Command{
		Use:   "run [flags] FILE|DIR...",
		Short: "Run sequence files against the bench and report the results",
		Long: `Run each sequence file in turn; a folder stands for the sequence files
under it (*.yaml, *.yml, *.json, bench files left out), in path order.
-k selects sequences by name, file name or group name; --shard I/N then
keeps one share of them, for CI fleets (hilrun report merge joins the
shards' reports). Every file is validated before any port is opened: one
invalid file runs none (exit 2).
Otherwise each sequence runs, one summary follows, and the exit code is the
most serious outcome: 130 interrupted (a second signal cuts finally steps
short) over 3 infrastructure error (a port or tool could not be reached or
vanished, or a log could not be written in full: the run goes on, and says
what was lost) over 1 a step failed over 0 all passed.`,
		Example: `  hilrun run --sim sequences/sim/smoke.yaml
  hilrun run --qemu firmware/qemu/build/qemu.elf sequences/qemu/firmware-memory.yaml
  hilrun run --port console=/dev/ttyACM0 --junit out.xml seq.yaml
  hilrun run --json - --var fw=1.2.3 seq.yaml
  hilrun run --sim -k 'smoke or memory' sequences/sim
  hilrun run --sim -m 'smoke and not slow' --quarantine quarantine.yaml sequences/sim
  hilrun run --list sequences/
  hilrun run --sim --shard 2/4 --durations last.json --json shard-2.json sequences/sim

  hilrun run --pool lab.pool.yaml -j 4 --junit out.xml sequences/`,
		Args: needFiles("run"),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Files = args
			return Run(cmd.Context(), ios, opts)
		},
	}
	f := cmd.Flags()
	registerRecover(f, &opts.NoRecover, "run the benches' health checks before each sequence and climb their recovery ladders (health:, recover:) when a check fails or a sequence ends in a bench error; a bench that does not recover takes no more work")
	f.StringVar(&opts.JUnit, "junit", "", "write a JUnit XML report to `FILE`")
	f.StringVar(&opts.JSON, "json", "", "write a JSON report to `FILE` (- for standard output)")
	f.StringVar(&opts.HTML, "html", "", "write a self-contained HTML report to `FILE`")
	f.StringVar(&opts.Allure, "allure", "", "write Allure result files into `DIR`")
	f.StringVar(&opts.Measurements, "measurements", "", "write every measurement (measure steps) to `FILE` as CSV")
	f.StringVar(&opts.LogDir, "log-dir", "", "write raw, timestamped console logs under `DIR`")
	f.StringArrayVar(&opts.Vars, "var", nil, "set a variable, `NAME=VALUE` (repeatable)")
	opts.BindFlags.register(f, false)
	f.StringVar(&opts.Bench, "bench", "", "bench `FILE` binding device names to ports (default: "+steps.BenchFile+" beside the sequence)")
	f.BoolVar(&opts.Sim, "sim", false, "run against an in-process virtual board: the devices, probes and cameras that nothing else (bench file, --port, --openocd, --gdb) binds go to it")
	opts.QEMU.register(f)
	f.BoolVarP(&opts.Verbose, "verbose", "v", false, "also print what the consoles print")
	addSelectFlags(f, &opts.Filter, &opts.List)
	opts.Select.register(f)
	f.StringVar(&opts.Shard, "shard", "", "run only the `I/N` share of the selected sequence files (counted from 1, a file never split, after -k): the same on every machine, balanced by --durations or else by count")
	f.StringVar(&opts.Durations, "durations", "", "balance --shard by the sequence times in `REPORT`, a JSON report of a previous run (hilrun run --json); files it lacks weigh its mean")
	f.BoolVar(&opts.Realtime, "realtime", false, "run delays and repeat every: waits as SCHED_FIFO and lock hilrun's memory, when the system allows it (CAP_SYS_NICE, CAP_IPC_LOCK or root); says so when it does not")
	f.Var(bytesFlag{&opts.MaxValue}, "max-value", "the largest variable or saved value, and text built from variables, in `BYTES` (like 4MiB; default 1MiB): a step past it ends the run with an error")
	opts.Expr.register(f)
	f.IntVar(&opts.MaxFailures, "max-failures", results.DefaultMaxFailures, "list at most `N` failing iterations per repeat in the reports; the rest are counted")
	f.BoolVarP(&opts.ExitFirst, "exitfirst", "x", false, "stop at the first sequence that does not pass: start no more (with --pool, those running finish)")
	opts.Pool.register(f)
	opts.Retry.register(f)
	completeSequences(cmd)
	return cmd
}

// Run loads, binds and runs the sequence files of opts.
func Run(ctx context.Context, ios *IO, opts *RunOptions) error {
	// From the first moment: a signal while the virtual board or OpenOCD
	// starts must still stop hilrun through its cleanup.
	in := catchInterrupts(ctx, ios.ErrOut)
	defer in.stop()
	fl, err := parseFlags(opts.Vars, &opts.BindFlags)
	if err != nil {
		return err
	}
	if err := opts.Retry.check(); err != nil {
		return err
	}
	files, err := expandFiles(opts.Files)
	if err != nil {
		return invalid(err)
	}
	files, err = skipBenchFiles(ios, dropQuarantine(files, opts.Select.Quarantine))
	if err != nil {
		return err
	}
	if opts.ExitFirst && opts.Pool.File != "" {
		opts.Pool.FailFast = true
	}
	if opts.Pool.given() {
		return runPool(in, ios, opts, fl, files)
	}
	qemuSpec, err := opts.QEMU.spec(opts.Sim)
	if err != nil {
		return invalid(err)
	}
	simELF := &simImage{}
	defer simELF.remove()
	prep, err := prepareRun(ios, opts, fl, files, qemuSpec, simELF)
	if err != nil || prep == nil {
		return err // prep is nil after --list
	}
	opts.Retry.apply(prep.plans)
	if err := checkRunOptions(ios, opts); err != nil {
		return err
	}
	plans, stop, err := startBoards(in, ios, opts, prep, qemuSpec)
	defer stop()
	if err != nil {
		return err
	}
	seqs := make([]*steps.Sequence, len(plans))
	for i, pl := range plans {
		seqs[i] = pl.Sequence()
	}
	opts.info = runInfo(seqs)
	if in.Run.Err() != nil {
		return interrupted(errors.New("interrupted before the run started"))
	}
	in.enter(phaseRun)
	stream, err := openStream(ios, opts)
	defer stream.close()
	if err != nil {
		return err
	}
	in.flushFirst(stream.console.Flush)
	seqResults, err := runPlans(in, ios, opts, runList{plans, prep.ladders}, stream)
	if err != nil {
		return err
	}
	return finishRun(in, ios, opts, stream, seqResults)
}

// prepareRun loads, selects, shards, binds and checks the sequences of a
// run without --pool. It lists them and returns nil with --list.
func prepareRun(ios *IO, opts *RunOptions, fl bindFlags, files []string, qemuSpec *qemu.Spec, simELF *simImage) (*prepared, error) {
	shard, err := parseShard(opts.Shard)
	if err != nil {
		return nil, invalid(err)
	}
	var times durations
	if opts.Durations != "" {
		if !shard.on() {
			return nil, invalid(errors.New("--durations balances --shard: give --shard I/N too"))
		}
		if times, err = readDurations(opts.Durations, warnTo(ios.ErrOut)); err != nil {
			return nil, invalid(err)
		}
	}
	po := prepareOptions{Files: files, Bench: opts.Bench, Flags: fl, Sim: opts.Sim, Warn: warnTo(ios.ErrOut), Filter: opts.Filter, Select: opts.Select, List: opts.List, SimELF: simELF.path, Shard: shard, Durations: times, NoLadder: opts.NoRecover,
		Limits: plan.Limits{MaxValueBytes: opts.MaxValue, MaxExprWork: opts.Expr.Work, MaxExprMemory: opts.Expr.Memory}}
	if qemuSpec != nil {
		po.QEMU, po.QEMUKernel = true, qemuSpec.Kernel
	}
	prep, err := prepare(po)
	if err != nil {
		return nil, err
	}
	if opts.List {
		if err := listSequences(ios.Out, prep.seqs, opts.Retry.Retries); err != nil {
			return nil, err
		}
		if prep.shardNote != "" {
			fmt.Fprintln(ios.Out, prep.shardNote)
		}
		return nil, nil
	}
	if prep.shardNote != "" {
		note := prep.shardNote
		if len(prep.seqs) == 0 {
			note += ": nothing to run here, the reports list no sequence"
		}
		fmt.Fprintln(ios.ErrOut, "hilrun: "+note)
	}
	opts.shard = prep.shard
	return prep, nil
}

// checkRunOptions refuses, before any step runs, the options a run could
// not honour (a report that cannot be written), and asks for real-time
// scheduling with --realtime.
func checkRunOptions(ios *IO, opts *RunOptions) error {
	if opts.MaxFailures < 0 {
		return invalid(fmt.Errorf("--max-failures %d: want 0 (the default, 100) or more", opts.MaxFailures))
	}
	if err := checkReportPaths(opts); err != nil {
		return invalid(err)
	}
	if err := checkVisualReports(opts); err != nil {
		return invalid(err)
	}
	if opts.Realtime {
		if err := runner.EnableRealtime(); err != nil {
			for _, line := range strings.Split(err.Error(), "\n") {
				fmt.Fprintln(ios.ErrOut, "hilrun: --realtime: "+line)
			}
		}
	}
	return nil
}

// startBoards starts the virtual board (--sim) or the QEMU board (--qemu)
// and returns the plans bound to them; stop stops them, and is never nil.
func startBoards(in *interrupts, ios *IO, opts *RunOptions, prep *prepared, qemuSpec *qemu.Spec) (plans []*plan.Plan, stop func(), err error) {
	plans = prep.plans
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if opts.Sim {
		bench, err := startSimBench(in.Run, sim.Options{Consoles: simConsoles(append(slices.Clone(plans), ladderPlans(prep.ladders)...))}, prep.simProbes, hostGates())
		if err != nil {
			if in.Run.Err() != nil {
				return nil, stop, interrupted(fmt.Errorf("interrupted while starting the virtual board: %w", err))
			}
			return nil, stop, infra(err)
		}
		stops = append(stops, func() { bench.Close() })
		if bench.note != "" {
			fmt.Fprintln(ios.ErrOut, "hilrun: "+bench.note)
		}
		for i, pl := range plans {
			plans[i], _ = pl.Rebind(func(seq *steps.Sequence) (*steps.Sequence, error) { return bench.bind(seq), nil })
		}
		rebindLadders(prep.ladders, func(seq *steps.Sequence) (*steps.Sequence, error) { return bench.bind(seq), nil })
	}
	if qemuSpec != nil {
		board, err := startQEMUBoard(in.Run, ios.ErrOut, *qemuSpec, opts.LogDir, hostGates())
		if err != nil {
			return nil, stop, err
		}
		stops = append(stops, func() { board.Close(context.Background()) })
		for i, pl := range plans {
			plans[i], _ = pl.Rebind(func(seq *steps.Sequence) (*steps.Sequence, error) { return board.Bind(seq), nil })
		}
		rebindLadders(prep.ladders, func(seq *steps.Sequence) (*steps.Sequence, error) { return board.Bind(seq), nil })
	}
	return plans, stop, nil
}

// warnTo writes warnings to w, one line each.
func warnTo(w io.Writer) func(string) {
	return func(msg string) { fmt.Fprintln(w, "hilrun: "+msg) }
}

// artifactDir is where a run's pictures and host command output go: the
// run's log folder, else, for a sequence with camera, exec or power steps,
// a new folder under the system's temporary one (the console output names
// each picture). It is absolute, so that JUnit attachment lines find the
// files.
func artifactDir(seq *steps.Sequence, logDir, stamp string) (string, error) {
	if logDir != "" {
		return filepath.Abs(logDir)
	}
	needed := false
	steps.Walk(seq, func(s *steps.Step) {
		needed = needed || s.Kind == steps.KindCamera || s.Kind == steps.KindExec || s.Kind == steps.KindPower
	})
	if !needed {
		return "", nil
	}
	dir, err := os.MkdirTemp("", "hilrun-"+stamp+"-"+safeName(seq.Name)+"-")
	if err != nil {
		return "", fmt.Errorf("make a folder for pictures and command output: %w", err)
	}
	return filepath.Abs(dir)
}

var unsafeChars = regexp.MustCompile(`[^A-Za-z0-9._-]+`)

func safeName(s string) string {
	s = unsafeChars.ReplaceAllString(s, "_")
	if s == "" {
		return "sequence"
	}
	return s
}

// checkReportPaths makes sure each report file given can be written, by
// creating and removing a file beside it, so that a bad path is found before
// the run rather than after it.
func checkReportPaths(opts *RunOptions) error {
	for _, r := range []struct{ flag, path string }{{"--junit", opts.JUnit}, {"--json", opts.JSON}, {"--html", opts.HTML}, {"--measurements", opts.Measurements}} {
		if r.path == "" || (r.path == "-" && r.flag != "--junit" && r.flag != "--measurements") {
			continue // --json - is standard output; checkVisualReports refuses --html -
		}
		if r.path == "-" {
			return fmt.Errorf("%s -: only --json writes to standard output; give %s a file name", r.flag, r.flag)
		}
		if fi, err := os.Stat(r.path); err == nil && fi.IsDir() {
			return fmt.Errorf("%s %s: is a folder, want a file", r.flag, r.path)
		}
		dir := filepath.Dir(r.path)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("%s %s: cannot write the report: %w", r.flag, r.path, err)
		}
		f, err := os.CreateTemp(dir, "."+filepath.Base(r.path)+".*")
		if err != nil {
			return fmt.Errorf("%s %s: cannot write the report: %w", r.flag, r.path, err)
		}
		f.Close()
		os.Remove(f.Name())
	}
	return nil
}

// writeReports writes each report from the event file on its own, so that
// one that fails loses no other; the error names every report lost, and
// says when the event stream itself lost steps (streamErr). Writing stops
// when ctx is done.
func writeReports(ctx context.Context, ios *IO, opts *RunOptions, events string, streamErr error) error {
	sum := results.Options{MaxFailures: opts.MaxFailures}
	var lost []string
	if opts.JUnit != "" {
		// The machine that ran the sequences: CI servers show it beside
		// each suite, which tells benches apart. Without one, the
		// attribute is left out.
		host, _ := os.Hostname()
		jopts := report.JUnitOptions{Hostname: host, Summary: sum, Shard: opts.shard}
		if err := writeFile(ctx, opts.JUnit, func(w io.Writer) error {
			return report.WriteJUnit(w, events, jopts)
		}); err != nil {
			lost = append(lost, fmt.Sprintf("JUnit report %s not written: %v", opts.JUnit, err))
		}
	}
	switch opts.JSON {
	case "":
	case "-":
		if err := report.WriteShardJSON(ctxWriter{ctx, ios.Out}, events, sum, opts.shard); err != nil {
			lost = append(lost, fmt.Sprintf("JSON report to standard output not written: %v", err))
		}
	default:
		if err := writeFile(ctx, opts.JSON, func(w io.Writer) error { return report.WriteShardJSON(w, events, sum, opts.shard) }); err != nil {
			lost = append(lost, fmt.Sprintf("JSON report %s not written: %v", opts.JSON, err))
		}
	}
	if opts.Measurements != "" {
		if err := writeFile(ctx, opts.Measurements, func(w io.Writer) error { return report.WriteMeasurementsCSV(w, events) }); err != nil {
			lost = append(lost, fmt.Sprintf("measurements %s not written: %v", opts.Measurements, err))
		}
	}
	lost = append(lost, writeVisualReports(ctx, opts, events, sum)...)
	if streamErr != nil {
		lost = append(lost, fmt.Sprintf("the event stream lost steps, so reports may lack them: %v", streamErr))
	}
	if len(lost) > 0 {
		return errors.New(strings.Join(lost, "; "))
	}
	return nil
}

// writeFile writes through a temporary file so a report is never half
// written; writing stops when ctx is done. The report's mode is 0666 less
// the umask, as for any file a program creates.
func writeFile(ctx context.Context, path string, write func(io.Writer) error) error {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return err
		}
	}
	tmp, err := createTemp(filepath.Dir(path), "."+filepath.Base(path)+".")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := write(ctxWriter{ctx, tmp}); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

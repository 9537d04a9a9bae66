package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/proc/tmpdir"
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
	LogDir string
	Vars   []string
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
	f.StringVar(&opts.JUnit, "junit", "", "write a JUnit XML report to `FILE`")
	f.StringVar(&opts.JSON, "json", "", "write a JSON report to `FILE` (- for standard output)")
	f.StringVar(&opts.HTML, "html", "", "write a self-contained HTML report to `FILE`")
	f.StringVar(&opts.Allure, "allure", "", "write Allure result files into `DIR`")
	f.StringVar(&opts.LogDir, "log-dir", "", "write raw, timestamped console logs under `DIR`")
	f.StringArrayVar(&opts.Vars, "var", nil, "set a variable, `NAME=VALUE` (repeatable)")
	opts.BindFlags.register(f, false)
	f.StringVar(&opts.Bench, "bench", "", "bench `FILE` binding device names to ports (default: "+steps.BenchFile+" beside the sequence)")
	f.BoolVar(&opts.Sim, "sim", false, "run against an in-process virtual board: the devices, probes and cameras that nothing else (bench file, --port, --openocd, --gdb) binds go to it")
	opts.QEMU.register(f)
	f.BoolVarP(&opts.Verbose, "verbose", "v", false, "also print what the consoles print")
	addSelectFlags(f, &opts.Filter, &opts.List)
	f.StringVar(&opts.Shard, "shard", "", "run only the `I/N` share of the selected sequence files (counted from 1, a file never split, after -k): the same on every machine, balanced by --durations or else by count")
	f.StringVar(&opts.Durations, "durations", "", "balance --shard by the sequence times in `REPORT`, a JSON report of a previous run (hilrun run --json); files it lacks weigh its mean")
	f.BoolVar(&opts.Realtime, "realtime", false, "run delays and repeat every: waits as SCHED_FIFO and lock hilrun's memory, when the system allows it (CAP_SYS_NICE, CAP_IPC_LOCK or root); says so when it does not")
	f.Var(bytesFlag{&opts.MaxValue}, "max-value", "the largest variable or saved value, and text built from variables, in `BYTES` (like 4MiB; default 1MiB): a step past it ends the run with an error")
	opts.Expr.register(f)
	f.IntVar(&opts.MaxFailures, "max-failures", results.DefaultMaxFailures, "list at most `N` failing iterations per repeat in the reports; the rest are counted")
	f.BoolVarP(&opts.ExitFirst, "exitfirst", "x", false, "stop at the first sequence that does not pass: start no more (with --pool, those running finish)")
	opts.Pool.register(f)
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
	files, err := expandFiles(opts.Files)
	if err != nil {
		return invalid(err)
	}
	files, err = skipBenchFiles(ios, files)
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
	shard, err := parseShard(opts.Shard)
	if err != nil {
		return invalid(err)
	}
	var times durations
	if opts.Durations != "" {
		if !shard.on() {
			return invalid(errors.New("--durations balances --shard: give --shard I/N too"))
		}
		if times, err = readDurations(opts.Durations, warnTo(ios.ErrOut)); err != nil {
			return invalid(err)
		}
	}
	simELF := &simImage{}
	defer simELF.remove()
	po := prepareOptions{Files: files, Bench: opts.Bench, Flags: fl, Sim: opts.Sim, Warn: warnTo(ios.ErrOut), Filter: opts.Filter, List: opts.List, SimELF: simELF.path, Shard: shard, Durations: times,
		Limits: plan.Limits{MaxValueBytes: opts.MaxValue, MaxExprWork: opts.Expr.Work, MaxExprMemory: opts.Expr.Memory}}
	if qemuSpec != nil {
		po.QEMU, po.QEMUKernel = true, qemuSpec.Kernel
	}
	prep, err := prepare(po)
	if err != nil {
		return err
	}
	if opts.List {
		if err := listSequences(ios.Out, prep.seqs); err != nil {
			return err
		}
		if prep.shardNote != "" {
			fmt.Fprintln(ios.Out, prep.shardNote)
		}
		return nil
	}
	if prep.shardNote != "" {
		note := prep.shardNote
		if len(prep.seqs) == 0 {
			note += ": nothing to run here, the reports list no sequence"
		}
		fmt.Fprintln(ios.ErrOut, "hilrun: "+note)
	}
	plans, needProbe := prep.plans, prep.simProbes
	opts.shard = prep.shard

	if opts.MaxFailures < 0 {
		return invalid(fmt.Errorf("--max-failures %d: want 0 (the default, 100) or more", opts.MaxFailures))
	}
	// A report that cannot be written is found now, before any step runs.
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

	if opts.Sim {
		bench, err := startSimBench(in.Run, sim.Options{}, needProbe, nil)
		if err != nil {
			if in.Run.Err() != nil {
				return interrupted(fmt.Errorf("interrupted while starting the virtual board: %w", err))
			}
			return infra(err)
		}
		defer bench.Close()
		if bench.note != "" {
			fmt.Fprintln(ios.ErrOut, "hilrun: "+bench.note)
		}
		for i, pl := range plans {
			plans[i], _ = pl.Rebind(func(seq *steps.Sequence) (*steps.Sequence, error) { return bench.bind(seq), nil })
		}
	}

	if qemuSpec != nil {
		board, err := startQEMUBoard(in.Run, ios.ErrOut, *qemuSpec, opts.LogDir)
		if err != nil {
			return err
		}
		defer board.Close(context.Background())
		for i, pl := range plans {
			plans[i], _ = pl.Rebind(func(seq *steps.Sequence) (*steps.Sequence, error) { return board.Bind(seq), nil })
		}
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
	runCtx, finCtx := in.Run, in.Fin

	progress := ios.Out
	if opts.JSON == "-" {
		progress = ios.ErrOut
	}
	color := false
	if f, ok := progress.(*os.File); ok {
		color = report.ColorFor(f)
	}
	console := report.NewConsole(progress, report.ConsoleOptions{Color: color, Verbose: opts.Verbose, Summary: results.Options{MaxFailures: opts.MaxFailures}})

	stamp := time.Now().UTC().Format("20060102T150405Z")
	// Every finished step goes to the event stream on disk, not to memory;
	// the reports are written from it. Without --log-dir it lives in a
	// private folder removed at exit.
	eventsPath := ""
	// The HTML report and Allure show the consoles' timelines: without
	// --log-dir, they are logged in the private folder.
	consoleRoot := ""
	if opts.LogDir != "" {
		eventsPath = filepath.Join(opts.LogDir, stamp+"-"+results.EventFile)
		if err := report.WriteRunInfo(filepath.Join(opts.LogDir, stamp+"-"+report.RunInfoFile), opts.info); err != nil {
			fmt.Fprintf(ios.ErrOut, "hilrun: %v\n", err)
		}
	} else {
		tmp, err := tmpdir.New("events")
		if err != nil {
			return infra(fmt.Errorf("make a folder for the event stream: %w", err))
		}
		defer tmp.Remove()
		eventsPath = filepath.Join(tmp.Path, results.EventFile)
		if opts.HTML != "" || opts.Allure != "" {
			consoleRoot = filepath.Join(tmp.Path, "consoles")
			opts.consoleRoot = consoleRoot
		}
	}
	events, err := results.Create(eventsPath)
	if err != nil {
		return infra(err)
	}
	defer events.Close()
	if opts.LogDir != "" {
		// A full log disk must not cost the reports their steps: the
		// stream goes on in a private folder, which is removed at exit.
		var spare *tmpdir.Dir
		defer func() { spare.Remove() }()
		events.Spare = func() (string, error) {
			var err error
			if spare, err = tmpdir.New("events"); err != nil {
				return "", err
			}
			return filepath.Join(spare.Path, results.EventFile), nil
		}
	}

	var seqResults []runner.SequenceResult
	for i, seq := range seqs {
		logDir := ""
		if opts.LogDir != "" {
			logDir = filepath.Join(opts.LogDir, stamp+"-"+safeName(seq.Name))
			if err := os.MkdirAll(logDir, 0o777); err != nil {
				return infra(fmt.Errorf("create the log folder: %w", err))
			}
		}
		artifacts, err := artifactDir(seq, logDir, stamp)
		if err != nil {
			return infra(err)
		}
		consoleDir := logDir
		if consoleRoot != "" {
			consoleDir = filepath.Join(consoleRoot, strconv.Itoa(i))
		}
		// Consoles log into consoleDir; without --log-dir that is a
		// private folder gone at exit, which no report names.
		bench := engine.NewBench(engine.BenchConfig{LogDir: logDir, ConsoleLogDir: consoleDir, HideLogs: consoleRoot != "", Warn: warnTo(ios.ErrOut)})
		res := plans[i].Run(runCtx, bench, plan.Output{Sink: runner.Tee(events, console), ArtifactDir: artifacts, FinallyContext: finCtx})
		// The transcripts are in the event stream; the summary needs none.
		res.Transcripts = nil
		seqResults = append(seqResults, *res)
		if artifacts != "" && logDir == "" {
			// Only when no step wrote there: it removes empty folders only.
			os.Remove(artifacts)
		}
		if runCtx.Err() != nil {
			break
		}
		if opts.ExitFirst && res.Status != runner.Passed && i+1 < len(seqs) {
			fmt.Fprintf(ios.ErrOut, "hilrun: -x: %s did not pass, so the %s after it did not run\n", seq.Name, count(len(seqs)-i-1, "sequence"))
			break
		}
	}
	if len(seqResults) > 1 {
		console.Summary(seqResults)
	}
	if err := console.Err(); err != nil {
		fmt.Fprintf(ios.ErrOut, "hilrun: the progress report stopped (%v); the run went on to its end\n", err)
	}
	streamErr := events.Close()
	err = in.reports(func(ctx context.Context) error { return writeReports(ctx, ios, opts, events.Path(), streamErr) })
	if errors.Is(err, errAbandoned) {
		return interrupted(err)
	}
	if inc := events.Incomplete(); inc != nil {
		err = errors.Join(err, fmt.Errorf("the event stream in the log folder is incomplete (the reports were written from a whole copy): %w", inc))
	}
	if err != nil {
		return infra(err)
	}
	if code := resultCode(seqResults); code != ExitPassed {
		return silent(code)
	}
	return nil
}

// bindFlags are the NAME=VALUE flags of run and repl, by name.
type bindFlags struct {
	vars, ports, openocds, gdbs map[string]string
	// port is a bare --port PATH: the port of a sequence's only device.
	port string
}

// parseFlags reads the NAME=VALUE flags --var, --port and --probe (with
// --openocd and --gdb).
func parseFlags(varFlags []string, b *BindFlags) (bindFlags, error) {
	var f bindFlags
	var err error
	if f.vars, err = steps.ParseAssignments("var", varFlags); err != nil {
		return f, invalid(err)
	}
	openocdFlags, gdbFlags, err := b.probeFlags()
	if err != nil {
		return f, invalid(err)
	}
	portFlags := b.Ports
	if f.port, portFlags, err = barePort(portFlags); err != nil {
		return f, invalid(err)
	}
	if f.ports, err = steps.ParseAssignments("port", portFlags); err != nil {
		return f, invalid(err)
	}
	if f.openocds, err = steps.ParseAssignments("openocd", openocdFlags); err != nil {
		return f, invalid(err)
	}
	if f.gdbs, err = steps.ParseAssignments("gdb", gdbFlags); err != nil {
		return f, invalid(err)
	}
	return f, nil
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

// loadAll validates every file before anything runs; all errors of all
// files are reported together.
func loadAll(files []string, varNames []string) ([]*steps.Sequence, error) {
	var seqs []*steps.Sequence
	var all steps.ErrorList
	for _, f := range files {
		seq, err := steps.Load(f, steps.LoadOptions{Vars: varNames})
		var el steps.ErrorList
		switch {
		case errors.As(err, &el):
			all = append(all, el...)
		case err != nil:
			return nil, invalid(fmt.Errorf("read sequence: %w", err))
		default:
			seqs = append(seqs, seq)
		}
	}
	if len(all) > 0 {
		return nil, invalid(all)
	}
	return seqs, nil
}

// bindSequence binds seq to the bench file (--bench, else the one beside
// the sequence), --port, --openocd and --gdb, with the --var values and
// limits, and returns the plan and the bench file read, if any. seq is not
// changed. An error names the flag that gave the binding.
func bindSequence(seq *steps.Sequence, benchPath string, f bindFlags, limits plan.Limits) (*plan.Plan, *steps.Bench, error) {
	bench, err := benchFor(seq, benchPath)
	if err != nil {
		return nil, nil, err
	}
	ports, err := portsFor(seq, f)
	if err != nil {
		return nil, nil, err
	}
	pl, err := bindPlan(seq, plan.Sources{Bench: bench, Ports: ports, OpenOCDs: f.openocds, GDBs: f.gdbs, Vars: f.vars, Limits: limits})
	return pl, bench, err
}

// bindPlan is where every command binds a sequence into a plan: run,
// validate, shards, pools and the REPL. An error names the flag that gave
// the binding.
func bindPlan(seq *steps.Sequence, src plan.Sources) (*plan.Plan, error) {
	pl, err := plan.Bind(seq, src)
	if err != nil {
		return nil, flagHint(err)
	}
	return pl, nil
}

// flagHint names the flag that gave a binding steps.Bind refused.
func flagHint(err error) error {
	var be *steps.BindError
	if errors.As(err, &be) {
		return fmt.Errorf("--%s %s=%s: %w", be.Kind, be.Name, be.Value, err)
	}
	return err
}

// benchFor loads the bench file given, else the one beside seq, else none.
func benchFor(seq *steps.Sequence, benchPath string) (*steps.Bench, error) {
	if benchPath == "" {
		p := filepath.Join(filepath.Dir(seq.File), steps.BenchFile)
		if _, err := os.Stat(p); err == nil {
			benchPath = p
		}
	}
	if benchPath == "" {
		return nil, nil
	}
	b, err := steps.LoadBench(benchPath)
	if err != nil {
		var el steps.ErrorList
		if errors.As(err, &el) {
			return nil, el
		}
		return nil, fmt.Errorf("read bench file: %w", err)
	}
	return b, nil
}

// checkReportPaths makes sure each report file given can be written, by
// creating and removing a file beside it, so that a bad path is found before
// the run rather than after it.
func checkReportPaths(opts *RunOptions) error {
	for _, r := range []struct{ flag, path string }{{"--junit", opts.JUnit}, {"--json", opts.JSON}, {"--html", opts.HTML}} {
		if r.path == "" || r.path == "-" {
			continue
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

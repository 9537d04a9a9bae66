package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/hilrun/hilrun/pkg/proc/tmpdir"
	"github.com/hilrun/hilrun/pkg/report"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/steps"
)

// PoolOptions are hilrun run's flags for a pool of benches.
type PoolOptions struct {
	// File is the pool file (--pool); "" runs without a pool.
	File string
	// Jobs is how many sequences run at once (-j); 0 means one per bench.
	Jobs int
	// Busy says what to do with a bench another process holds: "wait"
	// (the default) or "skip".
	Busy string
	// FailFast starts no more sequences once one did not pass.
	FailFast bool
}

func (o *PoolOptions) register(f *pflag.FlagSet) {
	f.StringVar(&o.File, "pool", "", "run the sequences in parallel on the benches of the pool `FILE` (*.pool.yaml), each on the free bench used least recently")
	f.IntVarP(&o.Jobs, "jobs", "j", 0, "with --pool, run at most `N` sequences at once (default: one per bench)")
	f.StringVar(&o.Busy, "pool-busy", "wait", "with --pool, what to do with a bench another hilrun holds: wait or skip")
	f.BoolVar(&o.FailFast, "pool-fail-fast", false, "with --pool, start no more sequences once one failed (those running finish)")
}

// given reports whether any pool flag was given.
func (o *PoolOptions) given() bool {
	return o.File != "" || o.Jobs != 0 || o.FailFast || (o.Busy != "" && o.Busy != "wait")
}

// poolLeaseTTL is how long a pool's lease of a bench lasts unless renewed;
// the worker holding the bench renews it every third of that.
const poolLeaseTTL = 30 * time.Second

// poolRetry is how often a worker looks again at benches that another
// process holds, while it waits for one.
const poolRetry = 250 * time.Millisecond

// poolBench is a bench of the pool during a run.
type poolBench struct {
	*steps.PoolBench
	// keys are what the lock files and leases are taken on: the bench's
	// ports (none for a virtual board, which is this process's own).
	keys []string
	// simProbe says the virtual board must serve a probe; sb is the
	// board once started.
	simProbe bool
	sb       *simBench

	held    bool // by a worker of this run
	skipped bool // another process held it and --pool-busy skip
	// ladder is the bench's health check and recovery ladder, nil for
	// none; bad says its climb failed, and the bench takes no more work.
	ladder  *runLadder
	bad     bool
	waiting bool // "busy: waiting" was said
	taken   int  // when a worker last took it (p.takes), 0 for never
}

// runPool runs the sequence files on the benches of the pool file: each
// sequence, bound afresh to the bench it gets, on the next free bench,
// up to opts.Pool.Jobs at once.
func runPool(in *interrupts, ios *IO, opts *RunOptions, fl bindFlags, files []string) error {
	if err := checkPoolFlags(opts, fl); err != nil {
		return err
	}
	pool, err := steps.LoadPool(hostGates().Files, opts.Pool.File)
	if err != nil {
		var el steps.ErrorList
		if errors.As(err, &el) {
			return invalid(el)
		}
		return invalid(fmt.Errorf("read the pool file: %w", err))
	}
	prep, err := prepare(prepareOptions{Files: files, Flags: fl, Warn: warnTo(ios.ErrOut), Filter: opts.Filter, Select: opts.Select, List: true})
	if err != nil {
		return err
	}
	if opts.List {
		return listSequences(ios.Out, prep.loaded, opts.Retry.Retries)
	}
	seqs := prep.loaded
	benches := make([]*poolBench, len(pool.Benches))
	for i, pb := range pool.Benches {
		benches[i] = &poolBench{PoolBench: pb, keys: benchKeys(pb)}
	}
	// A quarantine entry for some benches applies once a sequence has
	// its bench: the checks skip it there, as the run does.
	sel, err := newSelection(opts.Filter, opts.Select)
	if err != nil {
		return err
	}
	if err := checkPool(seqs, benches, fl.secrets, sel); err != nil {
		return err
	}
	if err := checkReportPaths(opts); err != nil {
		return invalid(err)
	}
	lockDir, err := poolLockDir()
	if err != nil {
		return infra(err)
	}
	stop, err := startPoolBoards(in, ios, benches)
	defer stop()
	if err != nil {
		return err
	}
	if in.Run.Err() != nil {
		return interrupted(errors.New("interrupted before the run started"))
	}
	in.enter(phaseRun)
	started := time.Now()
	p, cleanup, err := newPoolRun(in, ios, opts, fl, benches, seqs, lockDir)
	defer cleanup()
	if err == nil {
		p.sel = sel
		err = p.bindLadders()
	}
	if err != nil {
		return err
	}
	infraErr := p.work(seqs)
	return p.finish(ios, seqs, started, infraErr)
}

// checkPoolFlags refuses the flags a pool run cannot take: the pool file
// binds each sequence to its benches.
func checkPoolFlags(opts *RunOptions, fl bindFlags) error {
	po := &opts.Pool
	if po.File == "" {
		return invalid(errors.New("-j, --pool-busy and --pool-fail-fast run sequences on the benches of a pool: give --pool FILE"))
	}
	for _, c := range []struct {
		flag string
		set  bool
	}{
		{"--bench", opts.Bench != ""}, {"--port", fl.port != "" || len(fl.ports) > 0}, {"--openocd", len(fl.openocds) > 0},
		{"--gdb", len(fl.gdbs) > 0}, {"--sim", opts.Sim}, {"--qemu", opts.QEMU.Kernel != "" || opts.QEMU.BIOS != ""},
	} {
		if c.set {
			return invalid(fmt.Errorf("--pool binds each sequence to a bench of the pool: %s cannot be given with it (put it in the pool file)", c.flag))
		}
	}
	if po.Busy != "wait" && po.Busy != "skip" {
		return invalid(fmt.Errorf("--pool-busy %q: want wait or skip", po.Busy))
	}
	if po.Jobs < 0 {
		return invalid(fmt.Errorf("-j %d: want 1 or more (0, the default, runs one sequence per bench)", po.Jobs))
	}
	if opts.MaxFailures < 0 {
		return invalid(fmt.Errorf("--max-failures %d: want 0 (the default, 100) or more", opts.MaxFailures))
	}
	return nil
}

// startPoolBoards starts the pool's virtual boards together; stop stops
// them, and is never nil.
func startPoolBoards(in *interrupts, ios *IO, benches []*poolBench) (stop func(), err error) {
	var wg sync.WaitGroup
	startErrs := make([]error, len(benches))
	for i, b := range benches {
		if !b.Sim {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.sb, startErrs[i] = startSimBench(in.Run, sim.Options{}, b.simProbe, hostGates())
		}()
	}
	wg.Wait()
	stop = func() {
		for _, b := range benches {
			if b.sb != nil {
				b.sb.Close()
			}
		}
	}
	if err := errors.Join(startErrs...); err != nil {
		if in.Run.Err() != nil {
			return stop, interrupted(fmt.Errorf("interrupted while starting the virtual boards: %w", err))
		}
		return stop, infra(err)
	}
	for _, b := range benches {
		if b.sb != nil && b.sb.note != "" {
			fmt.Fprintf(ios.ErrOut, "hilrun: [%s] %s\n", b.Name, b.sb.note)
			break
		}
	}
	return stop, nil
}

// newPoolRun makes the run's shared state: its output, its event stream
// and the folder of the benches' own streams. cleanup is never nil.
func newPoolRun(in *interrupts, ios *IO, opts *RunOptions, fl bindFlags, benches []*poolBench, seqs []*steps.Sequence, lockDir string) (p *poolRun, cleanup func(), err error) {
	var cleanups []func()
	cleanup = func() {
		for i := len(cleanups) - 1; i >= 0; i-- {
			cleanups[i]()
		}
	}
	progress := ios.Out
	if opts.JSON == "-" {
		progress = ios.ErrOut
	}
	stamp := time.Now().UTC().Format("20060102T150405Z")
	events, done, err := createEvents(opts.LogDir, stamp)
	if err != nil {
		return nil, cleanup, infra(err)
	}
	cleanups = append(cleanups, done)
	runTmp, err := tmpdir.New("pool")
	if err != nil {
		return nil, cleanup, infra(fmt.Errorf("make a folder for the benches' event streams: %w", err))
	}
	cleanups = append(cleanups, func() { runTmp.Remove() })
	// Each sequence's log folder, under its bench's: its name, made unique.
	logNames := make([]string, len(seqs))
	used := map[string]int{}
	for i, seq := range seqs {
		name := safeName(seq.Name)
		if used[name]++; used[name] > 1 {
			name = fmt.Sprintf("%s-%d", name, used[name])
		}
		logNames[i] = name
	}
	return &poolRun{
		logNames: logNames,
		in:       in, opts: opts, vars: fl.vars, secrets: fl.secrets, benches: benches, lockDir: lockDir,
		out: &lockedWriter{w: progress}, errOut: &lockedWriter{w: ios.ErrOut}, stamp: stamp, events: events, tmp: runTmp.Path,
		leases: serialx.NewLeases(), changed: make(chan struct{}),
		results:  make([]*runner.SequenceResult, len(seqs)),
		recorded: make([]recording, len(seqs)),
		problems: make([]string, len(seqs)),
	}, cleanup, nil
}

// work runs the sequences on up to -j workers, each taking the next
// sequence and the next free bench, and returns the first infrastructure
// error, after which no worker starts another sequence.
func (p *poolRun) work(seqs []*steps.Sequence) error {
	jobs := p.opts.Pool.Jobs
	if jobs == 0 || jobs > len(p.benches) {
		jobs = len(p.benches)
	}
	queue := make(chan int, len(seqs))
	for i := range seqs {
		queue <- i
	}
	close(queue)
	p.queue = queue
	var infraErr error
	var infraOnce sync.Once
	var wg sync.WaitGroup
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range queue {
				if p.stop.Load() || p.in.Run.Err() != nil {
					continue
				}
				if err := p.runOne(i, seqs[i]); err != nil {
					infraOnce.Do(func() { infraErr = err })
					p.stop.Store(true)
				}
			}
		}()
	}
	wg.Wait()
	p.appendMu.Lock()
	p.appendReadyLocked(true)
	p.appendMu.Unlock()
	return infraErr
}

// finish writes the summary, says what did not run and why, writes the
// reports and turns the results into the exit code.
func (p *poolRun) finish(ios *IO, seqs []*steps.Sequence, started time.Time, infraErr error) error {
	in, opts := p.in, p.opts
	var seqResults []runner.SequenceResult
	var problems, notRun []string
	for i, r := range p.results {
		if r == nil {
			notRun = append(notRun, seqs[i].File)
			if infraErr != nil {
				// Not run for the bench's sake: every report says so.
				seqResults = append(seqResults, recordNotRun(p.events, seqs[i], "", infraErr.Error()))
				problems = append(problems, "")
			}
			continue
		}
		seqResults = append(seqResults, *r)
		problems = append(problems, p.problems[i])
	}
	if len(seqResults) > 1 {
		console := report.NewConsole(p.out, report.ConsoleOptions{Summary: results.Options{MaxFailures: opts.MaxFailures}})
		console.SummaryOf(seqResults, problems, started)
	}
	p.badSummary()
	if len(notRun) > 0 {
		why := "a sequence did not pass and --pool-fail-fast is set"
		switch {
		case infraErr != nil:
			why = infraErr.Error()
		case in.Run.Err() != nil:
			why = "interrupted"
		}
		fmt.Fprintf(p.errOut, "hilrun: %s not run (%s): %s\n", count(len(notRun), "sequence"), why, strings.Join(notRun, ", "))
	}
	streamErr := p.events.Close()
	err := in.reports(func(ctx context.Context) error { return writeReports(ctx, ios, opts, p.events.Path(), streamErr) })
	if errors.Is(err, errAbandoned) {
		return interrupted(err)
	}
	if inc := p.events.Incomplete(); inc != nil {
		err = errors.Join(err, fmt.Errorf("the event stream in the log folder is incomplete (the reports were written from a whole copy): %w", inc))
	}
	if err == nil && infraErr != nil {
		err = infraErr
	}
	if err != nil {
		return infra(err)
	}
	if code := opts.Retry.runCode(ios, seqResults); code != ExitPassed {
		return silent(code)
	}
	if len(notRun) > 0 {
		if in.Run.Err() != nil {
			return silent(ExitInterrupted)
		}
		return silent(ExitFailed)
	}
	return nil
}

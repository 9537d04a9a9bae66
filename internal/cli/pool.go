package cli

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/pflag"

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/plan"
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
	waiting bool // "busy: waiting" was said
	taken   int  // when a worker last took it (p.takes), 0 for never
}

// runPool runs the sequence files on the benches of the pool file: each
// sequence, bound afresh to the bench it gets, on the next free bench,
// up to opts.Pool.Jobs at once.
func runPool(in *interrupts, ios *IO, opts *RunOptions, fl bindFlags, files []string) error {
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
	pool, err := steps.LoadPool(po.File)
	if err != nil {
		var el steps.ErrorList
		if errors.As(err, &el) {
			return invalid(el)
		}
		return invalid(fmt.Errorf("read the pool file: %w", err))
	}
	prep, err := prepare(prepareOptions{Files: files, Flags: fl, Warn: warnTo(ios.ErrOut), Filter: opts.Filter, List: true})
	if err != nil {
		return err
	}
	if opts.List {
		return listSequences(ios.Out, prep.loaded)
	}
	seqs := prep.loaded
	benches := make([]*poolBench, len(pool.Benches))
	for i, pb := range pool.Benches {
		benches[i] = &poolBench{PoolBench: pb, keys: benchKeys(pb)}
	}
	if err := checkPool(seqs, benches); err != nil {
		return err
	}
	if err := checkReportPaths(opts); err != nil {
		return invalid(err)
	}
	lockDir, err := poolLockDir()
	if err != nil {
		return infra(err)
	}

	// The virtual boards, started together.
	var wg sync.WaitGroup
	startErrs := make([]error, len(benches))
	for i, b := range benches {
		if !b.Sim {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.sb, startErrs[i] = startSimBench(in.Run, sim.Options{}, b.simProbe, nil)
		}()
	}
	wg.Wait()
	for _, b := range benches {
		if b.sb != nil {
			defer b.sb.Close()
		}
	}
	if err := errors.Join(startErrs...); err != nil {
		if in.Run.Err() != nil {
			return interrupted(fmt.Errorf("interrupted while starting the virtual boards: %w", err))
		}
		return infra(err)
	}
	for _, b := range benches {
		if b.sb != nil && b.sb.note != "" {
			fmt.Fprintf(ios.ErrOut, "hilrun: [%s] %s\n", b.Name, b.sb.note)
			break
		}
	}
	if in.Run.Err() != nil {
		return interrupted(errors.New("interrupted before the run started"))
	}
	in.enter(phaseRun)
	started := time.Now()

	progress := ios.Out
	if opts.JSON == "-" {
		progress = ios.ErrOut
	}
	out := &lockedWriter{w: progress}
	errOut := &lockedWriter{w: ios.ErrOut}
	stamp := time.Now().UTC().Format("20060102T150405Z")
	events, cleanup, err := createEvents(opts.LogDir, stamp)
	if err != nil {
		return infra(err)
	}
	defer cleanup()
	runTmp, err := tmpdir.New("pool")
	if err != nil {
		return infra(fmt.Errorf("make a folder for the benches' event streams: %w", err))
	}
	defer runTmp.Remove()

	jobs := po.Jobs
	if jobs == 0 || jobs > len(benches) {
		jobs = len(benches)
	}
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
	p := &poolRun{
		logNames: logNames,
		in:       in, opts: opts, vars: fl.vars, benches: benches, lockDir: lockDir,
		out: out, errOut: errOut, stamp: stamp, events: events, tmp: runTmp.Path,
		leases: serialx.NewLeases(), changed: make(chan struct{}),
		results:  make([]*runner.SequenceResult, len(seqs)),
		recorded: make([]recording, len(seqs)),
		problems: make([]string, len(seqs)),
	}
	queue := make(chan int, len(seqs))
	for i := range seqs {
		queue <- i
	}
	close(queue)
	var infraErr error
	var infraOnce sync.Once
	for w := 0; w < jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range queue {
				if p.stop.Load() || in.Run.Err() != nil {
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

	var seqResults []runner.SequenceResult
	var problems, notRun []string
	for i, r := range p.results {
		if r == nil {
			notRun = append(notRun, seqs[i].File)
			continue
		}
		seqResults = append(seqResults, *r)
		problems = append(problems, p.problems[i])
	}
	if len(seqResults) > 1 {
		console := report.NewConsole(out, report.ConsoleOptions{Summary: results.Options{MaxFailures: opts.MaxFailures}})
		console.SummaryOf(seqResults, problems, started)
	}
	if len(notRun) > 0 {
		why := "a sequence did not pass and --pool-fail-fast is set"
		switch {
		case infraErr != nil:
			why = infraErr.Error()
		case in.Run.Err() != nil:
			why = "interrupted"
		}
		fmt.Fprintf(errOut, "hilrun: %s not run (%s): %s\n", count(len(notRun), "sequence"), why, strings.Join(notRun, ", "))
	}
	streamErr := events.Close()
	err = in.reports(func(ctx context.Context) error { return writeReports(ctx, ios, opts, events.Path(), streamErr) })
	if errors.Is(err, errAbandoned) {
		return interrupted(err)
	}
	if inc := events.Incomplete(); inc != nil {
		err = errors.Join(err, fmt.Errorf("the event stream in the log folder is incomplete (the reports were written from a whole copy): %w", inc))
	}
	if err == nil && infraErr != nil {
		err = infraErr
	}
	if err != nil {
		return infra(err)
	}
	if code := resultCode(seqResults); code != ExitPassed {
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

// splitPoolFiles tells the pool files (*.pool.yaml) among files from the
// rest, keeping the order of each.
func splitPoolFiles(files []string) (rest, pools []string) {
	for _, f := range files {
		if isPoolName(f) {
			pools = append(pools, f)
		} else {
			rest = append(rest, f)
		}
	}
	return rest, pools
}

// loadPools loads the pool files validate was given.
func loadPools(files []string) (steps.ErrorList, []*steps.Pool) {
	var errs steps.ErrorList
	var pools []*steps.Pool
	for _, f := range files {
		p, err := steps.LoadPool(f)
		var el steps.ErrorList
		switch {
		case errors.As(err, &el):
			errs = append(errs, el...)
		case err != nil:
			errs = append(errs, &steps.Error{Pos: steps.Pos{File: f}, Msg: err.Error()})
		default:
			pools = append(pools, p)
		}
	}
	return errs, pools
}

// preparePool loads the sequences of o and checks each against every
// bench of the pool file, as run --pool does; prepared.seqs are the
// sequences as loaded.
func preparePool(poolFile string, o prepareOptions) (*prepared, error) {
	pool, err := steps.LoadPool(poolFile)
	if err != nil {
		var el steps.ErrorList
		if errors.As(err, &el) {
			return nil, invalid(el)
		}
		return nil, invalid(fmt.Errorf("read the pool file: %w", err))
	}
	o.List = true
	prep, err := prepare(o)
	if err != nil {
		return nil, err
	}
	benches := make([]*poolBench, len(pool.Benches))
	for i, pb := range pool.Benches {
		benches[i] = &poolBench{PoolBench: pb}
	}
	if err := checkPool(prep.loaded, benches); err != nil {
		return nil, err
	}
	prep.seqs = prep.loaded
	return prep, nil
}

// benchKeys are the keys a pool bench is held by across processes: its
// devices' ports (the path their links lead to) or USB selectors, else its
// name. A virtual board has none: it is this process's own.
func benchKeys(pb *steps.PoolBench) []string {
	if pb.Sim {
		return nil
	}
	var keys []string
	if pb.Bench != nil {
		for _, d := range pb.Bench.Devices {
			switch {
			case d.Port != "":
				keys = append(keys, "port "+serialx.LeaseKey(d.Port))
			case d.USB != nil:
				keys = append(keys, fmt.Sprintf("usb %+v", *d.USB))
			}
		}
	}
	if len(keys) == 0 {
		keys = []string{"bench " + pb.Name}
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

// bindToBench binds seq to the pool bench b with the run's variables and
// limits (in src): its bench file or inline bench, or for a virtual board
// what nothing else binds (before the board starts, probes are attached to
// simAddr).
func bindToBench(seq *steps.Sequence, b *poolBench, src plan.Sources) (*plan.Plan, error) {
	src.Bench = b.Bench
	pl, err := bindPlan(seq, src)
	if err != nil {
		return nil, fmt.Errorf("bench %s: %w", b.Name, err)
	}
	if !b.Sim {
		return pl, nil
	}
	return pl.Rebind(func(bound *steps.Sequence) (*steps.Sequence, error) {
		for _, pr := range bound.Probes {
			if pr.Backend() == "" {
				pr.AttachOpenOCD(simAddr)
			}
		}
		if b.sb != nil {
			bound = b.sb.bind(bound)
		}
		return bound, nil
	})
}

// checkPool checks every sequence bound to every bench, as prepare does
// for one bench, before anything opens; a problem that several benches
// share is said once, naming them.
func checkPool(seqs []*steps.Sequence, benches []*poolBench) error {
	type key struct {
		pos steps.Pos
		msg string
	}
	var order []key
	where := map[key][]string{}
	add := func(bench string, err error) {
		var el steps.ErrorList
		if !errors.As(err, &el) {
			el = steps.ErrorList{&steps.Error{Msg: err.Error()}}
		}
		for _, e := range el {
			k := key{e.Pos, e.Msg}
			if _, ok := where[k]; !ok {
				order = append(order, k)
			}
			where[k] = append(where[k], bench)
		}
	}
	checks := engine.NewBench(engine.BenchConfig{Launched: true})
	for _, seq := range seqs {
		for _, b := range benches {
			pl, err := bindToBench(seq, b, plan.Sources{})
			if err != nil {
				add(b.Name, err)
				continue
			}
			bound := pl.Sequence()
			for _, pr := range bound.Probes {
				if b.Sim && pr.OpenOCD == simAddr {
					b.simProbe = true
				}
			}
			for _, d := range bound.Devices {
				if d.Port == "" && d.USB == nil && !b.Sim && !engine.LaunchBinds(bound, d.Name) {
					add(b.Name, fmt.Errorf("%s: device %s has no port: bind it in the pool file's bench", seq.File, d.Name))
				}
			}
			if err := pl.Check(checks); err != nil {
				add(b.Name, err)
			}
		}
	}
	if len(order) == 0 {
		return nil
	}
	var list steps.ErrorList
	for _, k := range order {
		on := where[k]
		msg := k.msg + " (on bench " + on[0] + ")"
		if len(on) > 1 {
			msg = k.msg + " (on benches " + strings.Join(on, ", ") + ")"
		}
		list = append(list, &steps.Error{Pos: k.pos, Msg: msg})
	}
	return invalid(list)
}

// createEvents creates the run's event stream, as run does: in the log
// folder, else in a private folder that cleanup removes.
func createEvents(logDir, stamp string) (*results.Stream, func(), error) {
	var tmp, spare *tmpdir.Dir
	cleanup := func() { tmp.Remove(); spare.Remove() }
	path := ""
	if logDir != "" {
		path = filepath.Join(logDir, stamp+"-"+results.EventFile)
	} else {
		var err error
		if tmp, err = tmpdir.New("events"); err != nil {
			return nil, cleanup, fmt.Errorf("make a folder for the event stream: %w", err)
		}
		path = filepath.Join(tmp.Path, results.EventFile)
	}
	events, err := results.Create(path)
	if err != nil {
		return nil, cleanup, err
	}
	if logDir != "" {
		events.Spare = func() (string, error) {
			var err error
			if spare, err = tmpdir.New("events"); err != nil {
				return "", err
			}
			return filepath.Join(spare.Path, results.EventFile), nil
		}
	}
	return events, func() { events.Close(); cleanup() }, nil
}

// poolRun is the state the workers of a pool run share.
type poolRun struct {
	in          *interrupts
	opts        *RunOptions
	vars        map[string]string
	benches     []*poolBench
	takes       int // benches taken so far; see acquire
	lockDir     string
	out, errOut *lockedWriter
	stamp       string
	tmp         string
	leases      *serialx.Leases
	logNames    []string

	events   *results.Stream
	appendMu sync.Mutex // one sequence's records at a time
	// recorded holds each finished sequence's own event file until the
	// run's stream takes it, in the order the sequences were given;
	// nextAppend is the first it has not taken.
	recorded   []recording
	nextAppend int
	results    []*runner.SequenceResult
	problems   []string // each sequence's first problem, for the summary
	stop       atomic.Bool

	mu      sync.Mutex
	changed chan struct{} // closed and replaced when a bench is let go
}

// recording is a finished sequence's own event file.
type recording struct {
	path, bench, file string
}

// appendReadyLocked appends to the run's stream the recordings that are
// next in order, so that the reports list the sequences as given
// whatever finished first; all skips the sequences that never ran (once
// the run is over). appendMu is held.
func (p *poolRun) appendReadyLocked(all bool) {
	for p.nextAppend < len(p.recorded) {
		r := p.recorded[p.nextAppend]
		if r.path == "" {
			if !all {
				return
			}
			p.nextAppend++
			continue
		}
		if err := p.events.Append(r.path, r.bench); err != nil {
			fmt.Fprintf(p.errOut, "hilrun: [%s] the reports may lack steps of %s: %v\n", r.bench, r.file, err)
		}
		os.Remove(r.path)
		p.nextAppend++
	}
}

// errNoBench means every bench of the pool was skipped as busy.
var errNoBench = errors.New("every bench of the pool is held by another process (--pool-busy skip)")

// runOne runs sequence i on a free bench (see acquire). An error means no
// bench could be had; the sequence's own failures are in its result.
func (p *poolRun) runOne(i int, seq *steps.Sequence) error {
	ctx := p.in.Run
	b, lock, err := p.acquire(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return nil
		}
		return err
	}
	owner := fmt.Sprintf("pool %d bench %s", os.Getpid(), b.Name)
	renew, stopRenew := context.WithCancel(context.WithoutCancel(ctx))
	for _, k := range b.keys {
		p.leases.Hold(ctx, k, owner, serialx.LeaseOptions{TTL: poolLeaseTTL, Note: "sequence " + seq.Name})
	}
	go func() {
		t := time.NewTicker(poolLeaseTTL / 3)
		defer t.Stop()
		for {
			select {
			case <-renew.Done():
				return
			case <-t.C:
				for _, k := range b.keys {
					p.leases.Hold(renew, k, owner, serialx.LeaseOptions{TTL: poolLeaseTTL})
				}
			}
		}
	}()
	defer func() {
		stopRenew()
		for _, k := range b.keys {
			p.leases.Drop(k, owner)
		}
		p.release(b, lock)
	}()

	prefix := &prefixWriter{w: p.out, prefix: "[" + b.Name + "] "}
	errPrefix := &prefixWriter{w: p.errOut, prefix: "[" + b.Name + "] "}
	defer prefix.Flush()
	defer errPrefix.Flush()
	opts := p.opts
	pl, err := bindToBench(seq, b, plan.Sources{Vars: p.vars, Limits: plan.Limits{MaxValueBytes: opts.MaxValue, MaxExprWork: opts.Expr.Work, MaxExprMemory: opts.Expr.Memory}})
	if err != nil {
		return err // checkPool bound it already: not expected
	}
	bound := pl.Sequence()
	logDir := ""
	if opts.LogDir != "" {
		logDir = filepath.Join(opts.LogDir, p.stamp+"-"+b.Name, p.logNames[i])
		if err := os.MkdirAll(logDir, 0o777); err != nil {
			return fmt.Errorf("create the log folder: %w", err)
		}
	}
	artifacts, err := artifactDir(bound, logDir, p.stamp)
	if err != nil {
		return err
	}
	evPath := filepath.Join(p.tmp, fmt.Sprintf("events-%d.jsonl", i))
	ev, err := results.Create(evPath)
	if err != nil {
		return err
	}
	console := report.NewConsole(prefix, report.ConsoleOptions{Verbose: opts.Verbose, Summary: results.Options{MaxFailures: opts.MaxFailures}})
	bench := engine.NewBench(engine.BenchConfig{LogDir: logDir, Warn: warnTo(errPrefix)})
	res := pl.Run(ctx, bench, plan.Output{Sink: runner.Tee(ev, console), ArtifactDir: artifacts, FinallyContext: p.in.Fin})
	res.Transcripts = nil
	res.Bench = b.Name
	if artifacts != "" && logDir == "" {
		os.Remove(artifacts)
	}
	if err := console.Err(); err != nil {
		fmt.Fprintf(errPrefix, "hilrun: the progress report stopped (%v); the run went on to its end\n", err)
	}
	if err := ev.Close(); err != nil {
		fmt.Fprintf(errPrefix, "hilrun: the reports may lack steps of %s: %v\n", seq.File, err)
	}
	p.appendMu.Lock()
	p.recorded[i] = recording{path: evPath, bench: b.Name, file: seq.File}
	p.results[i] = res
	if probs := console.Problems(); len(probs) > 0 {
		p.problems[i] = probs[0]
	}
	p.appendReadyLocked(false)
	p.appendMu.Unlock()
	if res.Status != runner.Passed && opts.Pool.FailFast {
		p.stop.Store(true)
	}
	return nil
}

// acquire takes a bench that no worker of this run holds and no other
// process holds, waiting for one (or, with --pool-busy skip, leaving out
// those other processes hold). Of the free benches it takes the one taken
// least recently, one never taken first, in the pool file's order: the
// sequences spread over the benches, and with as many benches as
// sequences each runs on its own, however the workers' timing falls.
func (p *poolRun) acquire(ctx context.Context) (*poolBench, *benchLock, error) {
	for {
		p.mu.Lock()
		changed := p.changed
		free, others := 0, false
		order := slices.Clone(p.benches)
		slices.SortStableFunc(order, func(a, b *poolBench) int { return cmp.Compare(a.taken, b.taken) })
		for _, b := range order {
			if b.held || b.skipped {
				continue
			}
			free++
			lock, err := tryLockBench(p.lockDir, b.keys)
			if err == nil {
				b.held = true
				p.takes++
				b.taken = p.takes
				p.mu.Unlock()
				return b, lock, nil
			}
			if !errors.Is(err, errBenchBusy) {
				p.mu.Unlock()
				return nil, nil, fmt.Errorf("hold bench %s: %w", b.Name, err)
			}
			if p.opts.Pool.Busy == "skip" {
				b.skipped = true
				fmt.Fprintf(p.errOut, "hilrun: bench %s is busy, skipped: %s\n", b.Name, busyWhy(err))
				continue
			}
			others = true
			if !b.waiting {
				b.waiting = true
				fmt.Fprintf(p.errOut, "hilrun: bench %s is busy, waiting: %s\n", b.Name, busyWhy(err))
			}
		}
		usable := 0
		for _, b := range p.benches {
			if !b.skipped {
				usable++
			}
		}
		p.mu.Unlock()
		if usable == 0 {
			return nil, nil, errNoBench
		}
		// Another process lets go unannounced: look again now and then.
		t := time.NewTimer(poolRetry)
		if !others && free == 0 {
			t.Stop()
		}
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, nil, ctx.Err()
		case <-changed:
		case <-t.C:
		}
		t.Stop()
	}
}

// busyWhy is what tryLockBench's busy error says of the holder.
func busyWhy(err error) string {
	return strings.TrimSuffix(err.Error(), ": "+errBenchBusy.Error())
}

// release lets a bench go, to this run's other workers and to other
// processes.
func (p *poolRun) release(b *poolBench, lock *benchLock) {
	lock.unlock()
	p.mu.Lock()
	b.held = false
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}

// lockedWriter writes whole buffers to w, one at a time.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// maxPrefixLine bounds a line a prefixWriter holds back: a longer one is
// written in pieces, each a line of its own.
const maxPrefixLine = 64 << 10

// prefixWriter writes each whole line with prefix before it, in one
// Write to w, so that the lines of several benches never mix; a line
// without its end waits for it (up to maxPrefixLine) or Flush.
type prefixWriter struct {
	w      io.Writer
	prefix string
	buf    []byte
}

func (p *prefixWriter) Write(b []byte) (int, error) {
	p.buf = append(p.buf, b...)
	for {
		i := bytes.IndexByte(p.buf, '\n')
		if i < 0 && len(p.buf) >= maxPrefixLine {
			i = maxPrefixLine - 1
			p.buf = slices.Insert(p.buf, i+1, '\n')
		}
		if i < 0 {
			return len(b), nil
		}
		line := make([]byte, 0, len(p.prefix)+i+1)
		line = append(append(line, p.prefix...), p.buf[:i+1]...)
		p.buf = p.buf[i+1:]
		if _, err := p.w.Write(line); err != nil {
			return len(b), err
		}
	}
}

// Flush writes a last line that has no end, ending it.
func (p *prefixWriter) Flush() {
	if len(p.buf) > 0 {
		p.Write([]byte("\n"))
	}
}

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

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/proc/tmpdir"
	"github.com/hilrun/hilrun/pkg/report"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

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
	secrets     map[string]*steps.SecretSource // --secret, by name
	benches     []*poolBench
	takes       int // benches taken so far; see acquire
	lockDir     string
	out, errOut *lockedWriter
	stamp       string
	tmp         string
	leases      *serialx.Leases
	logNames    []string
	// sel marks what the quarantine list names for the bench a sequence
	// gets.
	sel *selection

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
	// queue holds the sequences no worker has taken yet; bad are the
	// benches marked bad, in order (appendMu).
	queue chan int
	bad   []results.BadBench

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

// runOne runs sequence i on a free bench (see acquire) whose health check
// passes; a bench whose ladder does not bring it back is bad, and the
// sequence goes to another. An error means no bench could be had; the
// sequence's own failures are in its result.
func (p *poolRun) runOne(i int, seq *steps.Sequence) error {
	ctx := p.in.Run
	for {
		b, lock, err := p.acquire(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		drop := p.hold(ctx, b, seq)
		prefix := &prefixWriter{w: p.out, prefix: "[" + b.Name + "] "}
		errPrefix := &prefixWriter{w: p.errOut, prefix: "[" + b.Name + "] "}
		healthy := p.healthy(b, seq, prefix, errPrefix)
		// A climb that an interrupt ended leaves seq not run.
		if healthy && ctx.Err() == nil {
			err = p.runOn(i, seq, b, prefix, errPrefix)
		}
		prefix.Flush()
		errPrefix.Flush()
		drop()
		p.release(b, lock)
		if healthy || ctx.Err() != nil {
			return err
		}
	}
}

// hold takes the leases of b's keys for seq, renewed until drop.
func (p *poolRun) hold(ctx context.Context, b *poolBench, seq *steps.Sequence) (drop func()) {
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
	return func() {
		stopRenew()
		for _, k := range b.keys {
			p.leases.Drop(k, owner)
		}
	}
}

// runOn runs sequence i on bench b, which this worker holds, and climbs
// b's ladder after a bench error while sequences wait.
func (p *poolRun) runOn(i int, seq *steps.Sequence, b *poolBench, prefix, errPrefix io.Writer) error {
	ctx := p.in.Run
	opts := p.opts
	seq = p.sel.mark(seq, b.Name)
	secrets, err := poolSecrets(p.secrets, b, seq)
	if err != nil {
		return fmt.Errorf("bench %s: %w", b.Name, err) // checkPool read them: a file gone since
	}
	pl, err := bindToBench(seq, b, plan.Sources{Vars: p.vars, Secrets: secrets, Limits: plan.Limits{MaxValueBytes: opts.MaxValue, MaxExprWork: opts.Expr.Work, MaxExprMemory: opts.Expr.Memory}})
	if err != nil {
		return err // checkPool bound it already: not expected
	}
	pl = pl.WithRetries(opts.Retry.Retries)
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
	bench := engine.NewBench(engine.BenchConfig{Gates: hostGates(), LogDir: logDir, Warn: warnTo(errPrefix), Secrets: pl.Secrets()})
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
	if b.ladder != nil && len(p.queue) > 0 && !p.stop.Load() {
		b.ladder.after(p.ladderRun(b, console, errPrefix, pl.Secrets()), seq.File, res)
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
			if b.held || b.skipped || b.bad {
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
		usable, bad, skipped := 0, 0, 0
		for _, b := range p.benches {
			switch {
			case b.bad:
				bad++
			case b.skipped:
				skipped++
			default:
				usable++
			}
		}
		p.mu.Unlock()
		if usable == 0 {
			if bad > 0 {
				return nil, nil, p.allBad(skipped)
			}
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
// processes; a bench whose ladder failed is bad from now on.
func (p *poolRun) release(b *poolBench, lock *benchLock) {
	lock.unlock()
	p.mu.Lock()
	b.held = false
	b.bad = b.ladder != nil && b.ladder.bad != ""
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

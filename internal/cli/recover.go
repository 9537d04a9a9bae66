package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/redact"
	"github.com/hilrun/hilrun/pkg/report"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// This file runs a bench's recovery ladder (steps.Ladder) between the
// sequences of a run: the health check before each sequence, and a climb
// of the ladder when it fails or when a sequence ended in a bench error.
// A bench whose climb fails is bad: it takes no more work.

// runLadder is a bench's ladder during a run.
type runLadder struct {
	*plan.Ladder
	// logDir is where its runs log, a folder per climb; "" keeps no logs.
	logDir string
	// climbs counts the climbs so far, checks the health checks.
	climbs, checks int
	// bad says why the bench is bad; "" while it is not.
	bad string
}

// ladderSources are the bindings of a ladder's sequence: the bench file,
// and of the run's flags those that name its own devices and probes (a
// bare --port PATH when it has one device).
func ladderSources(seq *steps.Sequence, b *steps.Bench, f bindFlags, limits plan.Limits) plan.Sources {
	only := func(m map[string]string, has func(string) bool) map[string]string {
		var out map[string]string
		for k, v := range m {
			if has(k) {
				if out == nil {
					out = map[string]string{}
				}
				out[k] = v
			}
		}
		return out
	}
	isDevice := func(n string) bool { return seq.Device(n) != nil }
	isProbe := func(n string) bool { return seq.Probe(n) != nil }
	ports := only(f.ports, isDevice)
	if f.port != "" && len(seq.Devices) == 1 && ports == nil {
		ports = map[string]string{seq.Devices[0].Name: f.port}
	}
	return plan.Sources{Bench: b, Ports: ports, OpenOCDs: only(f.openocds, isProbe), GDBs: only(f.gdbs, isProbe), Limits: limits}
}

// bindLadder binds the ladder of b, the bench of plan i, as prepare binds
// the plan (the bench file and flags, then --qemu and --sim), and checks
// it; plans with the same bench file share one. Problems go to add.
func (p *prepared) bindLadder(i int, b *steps.Bench, o prepareOptions, add func(error)) {
	if o.NoLadder || b == nil || b.Ladder == nil {
		return
	}
	if p.ladders == nil {
		p.ladders = make([]*runLadder, len(p.plans))
	}
	for _, l := range p.ladders[:i] {
		if l != nil && l.Bench() == b.File {
			p.ladders[i] = l
			return
		}
	}
	l, err := plan.BindLadder(b.File, b.Ladder, func(seq *steps.Sequence) (*plan.Plan, error) {
		src := ladderSources(seq, b, o.Flags, o.Limits)
		secrets, err := readSecrets(hostGates(), o.Flags.secrets, b, steps.SecretNames(seq))
		if err != nil {
			return nil, err
		}
		src.Secrets = secrets
		pl, err := bindPlan(seq, src)
		if err == nil && o.QEMU {
			pl, err = pl.Rebind(func(seq *steps.Sequence) (*steps.Sequence, error) { return engine.ReserveQEMU(seq, o.QEMUKernel) })
		}
		if err != nil {
			return nil, err
		}
		pl, _, err = o.unboundAsSim(pl, p, add)
		return pl, err
	})
	if err != nil {
		add(err)
		return
	}
	add(l.Check(engine.NewBench(engine.BenchConfig{Gates: hostGates(), Launched: true})))
	p.ladders[i] = &runLadder{Ladder: l}
}

// rebind rebinds every ladder of ls by f, as startBoards rebinds the
// plans to the boards it started.
func rebindLadders(ls []*runLadder, f func(*steps.Sequence) (*steps.Sequence, error)) {
	done := map[*runLadder]bool{}
	for _, l := range ls {
		if l == nil || done[l] {
			continue
		}
		done[l] = true
		l.Ladder, _ = l.Rebind(f)
	}
}

// ladderRun is what running a ladder's plans needs from the run.
type ladderRun struct {
	in   *interrupts
	warn func(string)
	// record takes a climb: to the event stream and the console.
	record func(*results.Recovery, *results.BadBench)
	// secrets are those of the sequence the ladder runs before or after:
	// its consoles mask them, as that sequence's do.
	secrets *redact.Set
}

// runFunc runs the ladder's plans, each on a bench of its own, its logs
// in a folder of the climb's (or of the health check's) under logDir.
func (l *runLadder) runFunc(r ladderRun, folder string) plan.RunFunc {
	return func(ctx context.Context, pl *plan.Plan, what string) *runner.SequenceResult {
		logDir := ""
		if l.logDir != "" {
			logDir = filepath.Join(l.logDir, folder, what)
			if err := os.MkdirAll(logDir, 0o777); err != nil {
				r.warn(fmt.Sprintf("bench %s: no logs of its %s: %v", l.Bench(), what, err))
				logDir = ""
			}
		}
		artifacts, err := artifactDir(pl.Sequence(), logDir, time.Now().UTC().Format("20060102T150405Z"))
		if err != nil {
			r.warn(fmt.Sprintf("bench %s: %v", l.Bench(), err))
		}
		// Its consoles mask the ladder's own secrets and those of the
		// sequence it runs around.
		bench := engine.NewBench(engine.BenchConfig{Gates: hostGates(), LogDir: logDir, Warn: r.warn, Secrets: r.secrets.Merge(pl.Secrets())})
		res := pl.Run(ctx, bench, plan.Output{ArtifactDir: artifacts, FinallyContext: r.in.Fin, KeepSteps: true})
		if artifacts != "" && logDir == "" {
			os.Remove(artifacts)
		}
		return res
	}
}

// before runs the health check before the sequence in file, climbing when
// it fails; false means the bench is bad (now or before) and takes no
// more work.
func (l *runLadder) before(r ladderRun, file string) bool {
	if l.bad != "" {
		return false
	}
	l.checks++
	rec := l.Before(r.in.Run, l.runFunc(r, fmt.Sprintf("health-%d", l.checks)), file)
	if rec == nil {
		return true
	}
	l.settle(r, rec)
	return l.bad == ""
}

// after climbs the ladder after the sequence in file ended with res, when
// that was a bench error.
func (l *runLadder) after(r ladderRun, file string, res *runner.SequenceResult) {
	if l.bad != "" || res.Status != runner.Errored || r.in.Run.Err() != nil {
		return
	}
	l.settle(r, l.After(r.in.Run, l.runFunc(r, fmt.Sprintf("recover-%d", l.climbs+1)), file))
}

// settle records a climb, and marks the bench bad when it failed (not
// when the run was interrupted during it).
func (l *runLadder) settle(r ladderRun, rec *results.Recovery) {
	l.climbs++
	rec.Redact(r.secrets)
	var bad *results.BadBench
	if !rec.Recovered && !rec.Interrupted && r.in.Run.Err() == nil {
		l.bad = rec.BadReason()
		bad = &results.BadBench{Bench: l.Bench(), Reason: l.bad, At: rec.StartedAt.Add(rec.DurationMS.D())}
	}
	r.record(rec, bad)
}

// streamRecord records climbs in the run's event stream and prints them
// on console.
func streamRecord(events *results.Stream, console *report.Console) func(*results.Recovery, *results.BadBench) {
	return func(rec *results.Recovery, bad *results.BadBench) {
		events.Recovered(rec)
		console.Recovery(rec)
		if bad != nil {
			events.MarkedBad(bad)
			console.MarkedBad(bad)
		}
	}
}

// laterOn reports whether a plan after i runs on the ladder l.
func laterOn(ladders []*runLadder, i int, l *runLadder) bool {
	for _, o := range ladders[i+1:] {
		if o == l {
			return true
		}
	}
	return false
}

// record records a climb in the run's stream and on its console, and
// keeps a bad bench for the summary.
func (s *runStream) record(rec *results.Recovery, bad *results.BadBench) {
	streamRecord(s.events, s.console)(rec, bad)
	if bad != nil {
		s.bad = append(s.bad, *bad)
	}
}

// ladderLogs gives each ladder a log folder of its own under --log-dir:
// STAMP-bench-NAME.
func (s *runStream) ladderLogs(opts *RunOptions, ladders []*runLadder) {
	if opts.LogDir == "" {
		return
	}
	for _, l := range ladders {
		if l != nil && l.logDir == "" {
			l.logDir = filepath.Join(opts.LogDir, s.stamp+"-bench-"+safeName(filepath.Base(l.Bench())))
		}
	}
}

// ladderPlans are the plans of every ladder of ls, once each.
func ladderPlans(ls []*runLadder) []*plan.Plan {
	var out []*plan.Plan
	done := map[*runLadder]bool{}
	for _, l := range ls {
		if l != nil && !done[l] {
			done[l] = true
			out = append(out, l.Plans()...)
		}
	}
	return out
}

// ladderNote says, for validate, what a bench's ladder holds: ", a
// health check and 2 rungs", or "" for none.
func ladderNote(l *steps.Ladder) string {
	if l == nil || l.Health == nil {
		return ""
	}
	return ", a health check and " + count(len(l.Rungs), "rung")
}

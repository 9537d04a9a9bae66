package cli

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/redact"
	"github.com/hilrun/hilrun/pkg/report"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// This file runs the recovery ladders of a pool's benches (recover.go):
// each bench's health check before each sequence it takes, its ladder when
// the check fails or a sequence ends in a bench error while others wait.
// A bench whose ladder fails is bad for the rest of the run: the others
// take its queue, and the summary lists it with why.

// bindPoolLadder binds the ladder of b as bindToBench binds a sequence,
// with the secrets its steps send read as a sequence's are (flags are
// --secret's).
func bindPoolLadder(b *poolBench, flags map[string]*steps.SecretSource) (*plan.Ladder, error) {
	return plan.BindLadder(b.Name, b.Ladder, func(seq *steps.Sequence) (*plan.Plan, error) {
		secrets, err := poolSecrets(flags, b, seq)
		if err != nil {
			return nil, err
		}
		return bindPoolPlan(seq, b, plan.Sources{Secrets: secrets})
	})
}

// checkPoolLadder binds and checks the ladder of b before anything opens,
// as checkPool does each sequence, and notes whether it needs the virtual
// board's probe; problems go to add.
func checkPoolLadder(b *poolBench, flags map[string]*steps.SecretSource, checks runner.Bench, add func(string, error)) {
	l, err := bindPoolLadder(b, flags)
	if err != nil || l == nil {
		if err != nil {
			add(b.Name, err)
		}
		return
	}
	for _, pl := range l.Plans() {
		for _, pr := range pl.Sequence().Probes {
			if b.Sim && pr.OpenOCD == simAddr {
				b.simProbe = true
			}
		}
	}
	if err := l.Check(checks); err != nil {
		add(b.Name, err)
	}
}

// bindLadders binds the ladders of the pool's benches once their virtual
// boards run, each logging under the bench's folder; nothing with
// --recover=false.
func (p *poolRun) bindLadders() error {
	if p.opts.NoRecover {
		return nil
	}
	for _, b := range p.benches {
		l, err := bindPoolLadder(b, p.secrets)
		if err != nil {
			return err // checkPool bound it already: not expected
		}
		if l == nil {
			continue
		}
		b.ladder = &runLadder{Ladder: l}
		if p.opts.LogDir != "" {
			b.ladder.logDir = filepath.Join(p.opts.LogDir, p.stamp+"-"+b.Name, "bench")
		}
	}
	return nil
}

// healthy runs b's health check before seq, which this worker holds b
// for, climbing its ladder when the check fails; false means b is bad
// and seq needs another bench. A sequence that does not run (deselected,
// quarantined) needs no check.
func (p *poolRun) healthy(b *poolBench, seq *steps.Sequence, out, errOut io.Writer) bool {
	if b.ladder == nil || p.sel.mark(seq, b.Name).Skip != "" {
		return true
	}
	secrets, err := poolSecrets(p.secrets, b, seq)
	if err != nil {
		return true // checkPool read them: a file gone since, which runOn says
	}
	console := report.NewConsole(out, report.ConsoleOptions{Verbose: p.opts.Verbose})
	return b.ladder.before(p.ladderRun(b, console, errOut, secrets), seq.File)
}

// ladderRun is what b's ladder runs with: its climbs go to the run's
// stream between the sequences' records, and to b's console; its consoles
// mask secrets, those of the sequence it runs before or after.
func (p *poolRun) ladderRun(b *poolBench, console *report.Console, errOut io.Writer, secrets *redact.Set) ladderRun {
	return ladderRun{in: p.in, warn: warnTo(errOut), secrets: secrets, record: func(rec *results.Recovery, bad *results.BadBench) {
		rec.Bench = b.Name
		if bad != nil {
			bad.Bench = b.Name
		}
		p.appendMu.Lock()
		streamRecord(p.events, console)(rec, bad)
		if bad != nil {
			p.bad = append(p.bad, *bad)
		}
		p.appendMu.Unlock()
	}}
}

// allBad is the error of a pool whose benches are all bad, or busy with
// --pool-busy skip (skipped of them): no sequence can run any more.
func (p *poolRun) allBad(skipped int) error {
	p.appendMu.Lock()
	defer p.appendMu.Unlock()
	names := make([]string, len(p.bad))
	for i, b := range p.bad {
		names[i] = b.Bench
	}
	msg := "no bench of the pool is left: " + count(len(names), "bench") + " bad (" + strings.Join(names, ", ") + ")"
	if skipped > 0 {
		msg += fmt.Sprintf(", %d held by other processes", skipped)
	}
	return errors.New(msg)
}

// badSummary prints the benches marked bad after the summary.
func (p *poolRun) badSummary() {
	p.appendMu.Lock()
	bad := append([]results.BadBench(nil), p.bad...)
	p.appendMu.Unlock()
	report.NewConsole(p.out, report.ConsoleOptions{}).BadBenches(bad)
}

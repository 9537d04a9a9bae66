package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/report"
	"github.com/hilrun/hilrun/pkg/steps"
)

// simAddr stands for the virtual board's OpenOCD while the sequences are
// checked, before the board starts: a probe that --sim binds is attached
// to it, and simBench.bind replaces it by the real address.
const simAddr = "sim"

// prepareOptions are the inputs that run and validate share: how the
// sequences are bound and what is checked before anything is opened.
type prepareOptions struct {
	Files []string
	Bench string
	Flags bindFlags
	// Sim binds what nothing else binds to the virtual board.
	Sim bool
	// Unbound makes a device or probe that nothing binds a warning rather
	// than an error: validate does not know the flags run will get.
	Unbound bool
	// Warn receives warnings, one line each.
	Warn func(string)
	// Filter is the -k expression; "" selects every sequence.
	Filter string
	// Select is -m and --quarantine.
	Select SelectOptions
	// Shard keeps one share of the selected sequences (--shard I/N),
	// balanced by Durations when given.
	Shard     shardSpec
	Durations durations
	// List stops after loading and selecting: nothing is bound.
	List bool
	// QEMU binds what nothing else binds to a QEMU that --qemu starts
	// with QEMUKernel (engine.ReserveQEMU).
	QEMU       bool
	QEMUKernel string
	// SimELF gives the path of the virtual board's firmware image, for
	// the probes --sim binds that name no ELF file of their own; nil
	// gives them none.
	SimELF func() (string, error)
	// Limits go into every plan.
	Limits plan.Limits
	// NoLadder leaves the benches' health checks and recovery ladders
	// out (--recover=false).
	NoLadder bool
}

// prepared is what prepare found: the bound sequences, and whether --sim
// must serve a probe. loaded are the sequences as loaded, in the same
// order, which binding leaves unchanged (a pool binds them again, to each
// of its benches).
type prepared struct {
	seqs, loaded []*steps.Sequence
	// plans are the bound plans of seqs, in the same order (nil with
	// List); seqs[i] is plans[i].Sequence().
	plans []*plan.Plan
	// ladders are the recovery ladders of the plans' benches, in the
	// same order (nil for a bench without one, or all nil); plans with
	// one bench file share its ladder.
	ladders   []*runLadder
	simProbes bool
	// shardNote says what share --shard took, "" without --shard.
	shardNote string
	// shard is what the reports say of the share, nil without --shard.
	shard *report.Shard
}

// prepare loads every file, binds each sequence to the bench (the bench
// file, --port, --openocd, --gdb, then --sim for what is still unbound)
// and checks all that hilrun run would refuse before it opens a port:
// sequence errors, bench file errors, power steps without a power entry,
// devices and probes nothing binds, steps their probe's backend cannot
// run, symbols and images that are not there. All problems of all files
// are reported together, as invalid input.
func prepare(o prepareOptions) (*prepared, error) {
	warn := o.Warn
	if warn == nil {
		warn = func(string) {}
	}
	seqs, err := loadSelected(o, warn)
	if err != nil {
		return nil, err
	}
	p := &prepared{}
	if o.Shard.on() {
		// After -k, before binding: a shard binds and checks only what it
		// runs.
		all := len(seqs)
		var load []int64
		var plan string
		seqs, load, plan = shardPlan(seqs, o.Shard, o.Durations)
		p.shardNote = shardNote(o.Shard, len(seqs), all, load, o.Durations != nil)
		p.shard = &report.Shard{Index: o.Shard.Index, Total: o.Shard.Total, Sequences: all, Plan: plan}
	}
	p.seqs, p.loaded = seqs, seqs
	if o.List {
		return p, nil
	}
	p.seqs = make([]*steps.Sequence, len(seqs))
	p.plans = make([]*plan.Plan, len(seqs))
	var all steps.ErrorList
	var other []error
	add := func(err error) {
		var el steps.ErrorList
		switch {
		case err == nil:
		case errors.As(err, &el):
			all = append(all, el...)
		default:
			other = append(other, err)
		}
	}
	// The checks need no console or probe: a bench that opens nothing.
	checks := engine.NewBench(engine.BenchConfig{Gates: hostGates(), Launched: true})
	for i, loaded := range seqs {
		if loaded.Skip != "" {
			// Not run: nothing of it is opened, so nothing needs binding.
			if pl, err := bindPlan(loaded, plan.Sources{Vars: o.Flags.vars, Limits: o.Limits}); err == nil {
				p.plans[i], p.seqs[i] = pl, pl.Sequence()
			} else {
				add(err)
			}
			continue
		}
		pl, bench, err := bindSequence(loaded, o.Bench, o.Flags, o.Limits)
		if err != nil {
			add(err)
			continue
		}
		p.bindLadder(i, bench, o, add)
		if o.QEMU {
			if pl, err = pl.Rebind(func(seq *steps.Sequence) (*steps.Sequence, error) {
				return engine.ReserveQEMU(seq, o.QEMUKernel)
			}); err != nil {
				add(err)
				continue
			}
		}
		pl, unbound, err := o.unboundAsSim(pl, p, add)
		if err != nil {
			return nil, infra(err)
		}
		p.plans[i], p.seqs[i] = pl, pl.Sequence()
		if len(unbound) > 0 {
			warn(fmt.Sprintf("%s: nothing binds %s yet: run will need --port, --openocd or --gdb, an entry in %s, --sim or --qemu FILE", loaded.File, strings.Join(unbound, ", "), steps.BenchFile))
		}
		if o.Unbound {
			// validate: a build output that is not built yet is a note.
			add(notMissing(pl.Check(checks), warn))
		} else {
			add(pl.Check(checks))
		}
	}
	if len(other) > 0 {
		// Printed whole: an ErrorList inside would be printed alone.
		if len(all) > 0 {
			other = append(other, errors.New(dedupe(all).Error()))
		}
		return nil, invalid(errors.New(errors.Join(other...).Error()))
	}
	if len(all) > 0 {
		return nil, invalid(dedupe(all))
	}
	return p, nil
}

// loadSelected loads the files of o and keeps the sequences -k selects,
// with what -m, -k among matrix cases and the quarantine list skip
// marked (selection.mark).
func loadSelected(o prepareOptions, warn func(string)) ([]*steps.Sequence, error) {
	sel, err := newSelection(o.Filter, o.Select)
	if err != nil {
		return nil, err
	}
	seqs, err := loadAll(o.Files, steps.Names(o.Flags.vars))
	if err != nil {
		return nil, err
	}
	warnUnusedVars(seqs, o.Flags.vars, warn)
	if o.Filter != "" {
		all := len(seqs)
		if seqs = selectSequences(seqs, sel.filter); len(seqs) == 0 {
			return nil, invalid(fmt.Errorf("-k %q selects none of the %d sequences", o.Filter, all))
		}
	}
	return sel.markAll(seqs, benchName(o))
}

// unboundAsSim returns pl with what nothing binds made ready for --sim
// (probes attached to it, as an OpenOCD, with the board's firmware image;
// their check then sees them bound), and names what validate finds unbound.
// A device nothing binds without --sim or --qemu goes to add. An error is
// the firmware image that could not be written.
func (o prepareOptions) unboundAsSim(pl *plan.Plan, p *prepared, add func(error)) (*plan.Plan, []string, error) {
	var unbound []string
	var simErr error
	pl, _ = pl.Rebind(func(seq *steps.Sequence) (*steps.Sequence, error) {
		for _, d := range seq.Devices {
			if d.Port != "" || d.USB != nil || o.Sim || o.QEMU || engine.LaunchBinds(seq, d.Name) {
				continue
			}
			if o.Unbound {
				unbound = append(unbound, "device "+d.Name)
				continue
			}
			add(fmt.Errorf("%s: device %s has no port: set devices.%s.port, bind it in %s, pass --port %s=PATH, or use --sim or --qemu FILE", seq.File, d.Name, d.Name, steps.BenchFile, d.Name))
		}
		for _, pr := range seq.Probes {
			if pr.Backend() != "" {
				continue
			}
			switch {
			case o.Sim:
				p.simProbes = true
				if pr.ELF == "" && o.SimELF != nil {
					elf, err := o.SimELF()
					if err != nil {
						simErr = err
						return seq, nil
					}
					pr.ELF = elf
				}
			case o.Unbound:
				unbound = append(unbound, "probe "+pr.Name)
			default:
				continue // the plan's check says so, with the line
			}
			// Checked as --sim would bind it: an OpenOCD.
			pr.AttachOpenOCD(simAddr)
		}
		return seq, nil
	})
	return pl, unbound, simErr
}

// notMissing passes on the problems of err except those that say only
// that a file does not exist yet, which go to warn as notes, once per file.
func notMissing(err error, warn func(string)) error {
	var el steps.ErrorList
	if !errors.As(err, &el) {
		return err
	}
	var keep steps.ErrorList
	noted := map[string]bool{}
	for _, e := range el {
		if e.Missing == "" {
			keep = append(keep, e)
			continue
		}
		if !noted[e.Missing] {
			noted[e.Missing] = true
			warn(fmt.Sprintf("note: %s: %s is not there yet; if a build makes it, build it before hilrun run, which refuses the sequence without it", e.Pos, e.Missing))
		}
	}
	if len(keep) == 0 {
		return nil
	}
	return keep
}

// dedupe keeps the first of the errors that say the same about the same
// file (a missing ELF file, once for every symbol), naming the other lines.
func dedupe(list steps.ErrorList) steps.ErrorList {
	type key struct{ file, msg string }
	first := map[key]int{}
	more := map[int][]string{}
	var out steps.ErrorList
	for _, e := range list {
		k := key{e.Pos.File, e.Msg}
		if i, ok := first[k]; ok && e.Pos.Line > 0 {
			more[i] = append(more[i], fmt.Sprint(e.Pos.Line))
			continue
		}
		first[k] = len(out)
		out = append(out, e)
	}
	for i, lines := range more {
		e := *out[i]
		e.Msg += fmt.Sprintf(" (also on line %s)", strings.Join(lines, ", "))
		if len(lines) > 1 {
			e.Msg = strings.Replace(e.Msg, " (also on line ", " (also on lines ", 1)
		}
		out[i] = &e
	}
	return out
}

// warnUnusedVars warns about each --var that no sequence declares or uses:
// most likely a typo, which would leave the variable it meant at its
// default. A variable is used when loading without it fails.
func warnUnusedVars(seqs []*steps.Sequence, vars map[string]string, warn func(string)) {
	names := steps.Names(vars)
	for _, name := range names {
		used := false
		for _, seq := range seqs {
			if slices.ContainsFunc(seq.Vars, func(v *steps.Var) bool { return v.Name == name }) {
				used = true
				break
			}
			others := slices.DeleteFunc(slices.Clone(names), func(n string) bool { return n == name })
			if _, err := steps.Load(hostGates().Files, seq.File, steps.LoadOptions{Vars: others}); err != nil {
				used = true
				break
			}
		}
		if !used {
			var known []string
			for _, seq := range seqs {
				for _, v := range seq.Vars {
					known = append(known, v.Name)
				}
			}
			hint := ""
			if len(known) > 0 {
				slices.Sort(known)
				hint = "; the sequences' vars are " + strings.Join(slices.Compact(known), ", ")
			}
			warn(fmt.Sprintf("warning: --var %s: no sequence uses a variable %q%s", name, name, hint))
		}
	}
}

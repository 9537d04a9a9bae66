package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

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
		p, err := steps.LoadPool(hostGates().Files, f)
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
	pool, err := steps.LoadPool(hostGates().Files, poolFile)
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
	sel, err := newSelection(o.Filter, o.Select)
	if err != nil {
		return nil, err
	}
	if err := checkPool(prep.loaded, benches, o.Flags.secrets, sel); err != nil {
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
	pl, err := bindPoolPlan(seq, b, src)
	if err != nil {
		return nil, fmt.Errorf("bench %s: %w", b.Name, err)
	}
	return pl, nil
}

// bindPoolPlan is bindToBench without the bench's name on its errors.
func bindPoolPlan(seq *steps.Sequence, b *poolBench, src plan.Sources) (*plan.Plan, error) {
	src.Bench = b.Bench
	pl, err := bindPlan(seq, src)
	if err != nil {
		return nil, err
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
// for one bench, before anything opens, with its secrets from the flags
// and the bench; a problem that several benches share is said once,
// naming them. A sequence sel skips on a bench (a quarantine entry for
// that bench) is not checked there: it sends nothing on it.
func checkPool(seqs []*steps.Sequence, benches []*poolBench, secrets map[string]*steps.SecretSource, sel *selection) error {
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
			if !slices.Contains(where[k], bench) {
				where[k] = append(where[k], bench)
			}
		}
	}
	checks := engine.NewBench(engine.BenchConfig{Gates: hostGates(), Launched: true})
	for _, all := range seqs {
		if all.Skip != "" {
			continue // not run, on any bench
		}
		for _, b := range benches {
			seq := sel.mark(all, b.Name)
			if seq.Skip != "" {
				continue // not run on b
			}
			set, err := poolSecrets(secrets, b, seq)
			if err != nil {
				add(b.Name, err)
				continue
			}
			pl, err := bindToBench(seq, b, plan.Sources{Secrets: set})
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
	for _, b := range benches {
		checkPoolLadder(b, secrets, checks, add)
	}
	if len(order) == 0 {
		return nil
	}
	var list steps.ErrorList
	var lines []string
	plain := false
	for _, k := range order {
		on := where[k]
		msg := k.msg + " (on bench " + on[0] + ")"
		if len(on) > 1 {
			msg = k.msg + " (on benches " + strings.Join(on, ", ") + ")"
		}
		e := &steps.Error{Pos: k.pos, Msg: msg}
		list = append(list, e)
		if k.pos == (steps.Pos{}) {
			// A problem of no file's line (a flag's, or one that names
			// its file itself) is said as it is.
			lines, plain = append(lines, msg), true
			continue
		}
		lines = append(lines, e.Error())
	}
	if plain {
		return invalid(errors.New(strings.Join(lines, "\n")))
	}
	return invalid(list)
}

package steps

import (
	"fmt"
	"maps"
	"slices"
	"sort"
)

// This file is validate's look at a parallel: step: each branch checked
// with the variables defined before the step (a branch cannot see what
// another saves, as they run at once), devices and probes owned by one
// branch each, and barriers that every branch naming them can reach.

// branchCheck is the branch being checked.
type branchCheck struct {
	name string
	// wrote are the variables the branch defines: branches.NAME.var
	// reads them after the parallel: step.
	wrote map[string]bool
	// finally is set while its finally steps are checked.
	finally bool
}

// parallel checks a parallel: step and its branches.
func (v *validator) parallel(s *Step) {
	if v.branch != nil {
		v.add(s.Pos, "a parallel: inside branch %s of another is refused: branches do not nest; give the outer parallel: more branches instead", v.branch.name)
		return
	}
	if v.defined["branches"] && v.branchVars == nil {
		v.add(s.Pos, "a variable named branches is defined before this parallel:, which keeps the variables of its branches under branches.NAME.var: rename the variable")
	}
	before := v.defined
	saved := map[string]map[string]bool{}
	for _, b := range s.Steps {
		v.defined = maps.Clone(before)
		v.branch = &branchCheck{name: b.Name, wrote: map[string]bool{}}
		v.steps(b.Steps)
		// The branch's finally steps run however its steps ended, so
		// they may see any variable the steps could have saved.
		v.branch.finally = true
		v.steps(b.Finally)
		saved[b.Name] = v.branch.wrote
		v.branch = nil
	}
	v.defined = before
	v.define("branches")
	if v.branchVars == nil {
		v.branchVars = map[string]map[string]bool{}
	}
	maps.Copy(v.branchVars, saved)
	v.owners(s)
	v.barriers(s)
}

// barrier checks a barrier: step where it stands; parallel checks how
// the branches cross it.
func (v *validator) barrier(s *Step) {
	switch {
	case v.branch == nil:
		v.add(s.Pos, "barrier: waits for the other branches of a parallel: step, and this step is in none: put it inside a branch")
	case v.branch.finally:
		v.add(s.Pos, "a barrier in the finally: steps of branch %s is refused: they run once the branch ended, when the other branches may have been cancelled", v.branch.name)
	}
}

// branchRef checks a reference to branches.branch.name: an earlier
// parallel: step's branch of that name saves that variable.
func (v *validator) branchRef(p Pos, branch, name string) {
	ref := "branches." + branch + "." + name
	vars, ok := v.branchVars[branch]
	switch {
	case branch == "" || name == "":
		v.add(p, "%s: write branches.BRANCH.VARIABLE, the variable a branch of an earlier parallel: step saved", ref)
	case v.branchVars == nil:
		v.add(p, "variable %q is not defined here: no parallel: step comes before this step", ref)
	case !ok:
		v.add(p, "variable %q is not defined here: no branch %s ran before this step%s", ref, branch, suggest(branch, sortedKeys(v.branchVars)))
	case !vars[name]:
		v.add(p, "variable %q is not defined here: branch %s saves no variable %s%s", ref, branch, name, suggest(name, sortedKeys(vars)))
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := slices.Collect(maps.Keys(m))
	sort.Strings(keys)
	return keys
}

// retryInBranch refuses retries: inside a branch: an attempt reruns its
// scope from its first step, which one branch cannot do while the others
// go on, and a branch that ran again would never meet their barriers.
func (v *validator) retryInBranch(r *Retry) {
	if v.branch != nil && r != nil && r.Count > 0 {
		v.add(r.Pos, "retries: is refused inside branch %s of a parallel: a retried branch could not meet the other branches at their barriers: put retries: on a group or the sequence around the parallel:", v.branch.name)
	}
}

// owners refuses a device or probe that two branches of s use: each
// branch talks to its own.
func (v *validator) owners(s *Step) {
	type use struct {
		branch string
		pos    Pos
	}
	first := map[string]use{}
	for _, b := range s.Steps {
		told := map[string]bool{}
		walkSteps(Children(b), func(st *Step) {
			for _, what := range resources(st) {
				u, seen := first[what]
				switch {
				case !seen:
					first[what] = use{b.Name, st.Pos}
				case u.branch != b.Name && !told[what]:
					told[what] = true
					v.add(st.Pos, "%s is used by branch %s (line %d) and by branch %s: a device or probe belongs to one branch of a parallel:; use it in one branch, or before or after the parallel:", what, u.branch, u.pos.Line, b.Name)
				}
			}
		})
	}
}

// resources names the devices and probes step st talks to ("device dut",
// "probe board").
func resources(st *Step) []string {
	var out []string
	if k, ok := LookupKind(st.Kind); ok && k.On == OnDevice && st.To != "" {
		out = append(out, "device "+st.To)
	}
	if usesProbe(st) && st.To != "" {
		out = append(out, "probe "+st.To)
	}
	if st.Exec != nil && st.Exec.Port != "" {
		out = append(out, "device "+st.Exec.Port)
	}
	if st.Build != nil && st.Build.Port != "" {
		out = append(out, "device "+st.Build.Port)
	}
	return out
}

// walkSteps calls fn for each step of ss and the steps inside them.
func walkSteps(ss []*Step, fn func(*Step)) {
	for _, s := range ss {
		fn(s)
		walkSteps(Children(s), fn)
	}
}

// MaxBarrierOrder is how many barrier crossings of one branch, repeats
// unrolled, validate follows to prove that the barriers of a parallel:
// step cannot wait on each other forever; past it only their counts are
// checked, and a wait that cannot end ends at its timeout.
const MaxBarrierOrder = 10_000

// crossing is one arrival of a branch at a barrier.
type crossing struct {
	name string
	pos  Pos
}

// branchBarriers is how one branch crosses its barriers.
type branchBarriers struct {
	name   string
	counts map[string]uint64
	first  map[string]Pos
	// order is every crossing in the order the branch makes them; nil
	// past MaxBarrierOrder.
	order []crossing
	long  bool
}

// barriers checks how the branches of s cross their barriers: each
// barrier named by two branches at least, as often by each, none inside a
// repeat only time bounds, and in an order that cannot wait forever.
func (v *validator) barriers(s *Step) {
	var all []*branchBarriers
	named := map[string][]*branchBarriers{}
	for _, b := range s.Steps {
		bb := &branchBarriers{name: b.Name, counts: map[string]uint64{}, first: map[string]Pos{}}
		v.countCrossings(bb, b.Steps, 1)
		bb.order, bb.long = unroll(b.Steps, nil)
		all = append(all, bb)
		for _, name := range sortedKeys(bb.counts) {
			named[name] = append(named[name], bb)
		}
	}
	ok := true
	for _, name := range sortedKeys(named) {
		by := named[name]
		if len(by) == 1 {
			v.add(by[0].first[name], "barrier %s is named only by branch %s: a barrier waits until every branch that names it arrives, so at least two branches must name it", name, by[0].name)
			ok = false
			continue
		}
		for _, o := range by[1:] {
			if o.counts[name] != by[0].counts[name] {
				v.add(s.Pos, "barrier %s is reached %s by branch %s (line %d) but %s by branch %s (line %d): every branch that names a barrier must reach it as often",
					name, times(by[0].counts[name]), by[0].name, by[0].first[name].Line, times(o.counts[name]), o.name, o.first[name].Line)
				ok = false
				break
			}
		}
	}
	if ok {
		v.deadlock(s, all, named)
	}
}

func times(n uint64) string {
	if n == 1 {
		return "once"
	}
	return fmt.Sprintf("%d times", n)
}

// countCrossings counts the barrier crossings of ss into bb, each step
// running mult times; a barrier inside a repeat that only time bounds is
// refused, as how often each branch gets there depends on timing.
func (v *validator) countCrossings(bb *branchBarriers, ss []*Step, mult uint64) {
	for _, s := range ss {
		if name := BarrierName(s); name != "" {
			if _, seen := bb.first[name]; !seen {
				bb.first[name] = s.Pos
			}
			bb.counts[name] = satAdd(bb.counts[name], mult)
		}
		inner := mult
		switch {
		case s.Kind == KindRepeat && s.For > 0 && s.Every == 0:
			walkSteps(s.Steps, func(st *Step) {
				if name := BarrierName(st); name != "" {
					v.add(st.Pos, "barrier %s is inside a repeat that runs for: %s without every:, so how often each branch reaches it depends on timing: give the repeat a count: or an every:", name, s.For)
				}
			})
			// Counted once, so that no other message follows.
		case s.Kind == KindRepeat:
			n, _ := Iterations(s)
			inner = satMul(mult, n)
		case s.Matrix != nil:
			inner = satMul(mult, uint64(len(s.Matrix.Cases())))
		}
		v.countCrossings(bb, s.Steps, inner)
	}
}

// unroll lists the barrier crossings of ss in order, appended to out,
// with repeats and matrices unrolled; long is true past MaxBarrierOrder.
func unroll(ss []*Step, out []crossing) (_ []crossing, long bool) {
	for _, s := range ss {
		if name := BarrierName(s); name != "" {
			out = append(out, crossing{name, s.Pos})
		}
		n := uint64(1)
		switch {
		case s.Kind == KindRepeat:
			n, _ = Iterations(s)
		case s.Matrix != nil:
			n = uint64(len(s.Matrix.Cases()))
		}
		body, long := unroll(s.Steps, nil)
		if long || uint64(len(out))+satMul(n, uint64(len(body))) > MaxBarrierOrder {
			return nil, true
		}
		for i := uint64(0); i < n && len(body) > 0; i++ {
			out = append(out, body...)
		}
	}
	if len(out) > MaxBarrierOrder {
		return nil, true
	}
	return out, false
}

// deadlock runs the branches' crossings as the barriers would let them
// and refuses an order in which some branch waits forever: branch a at
// barrier x for b, while b waits at y for a.
func (v *validator) deadlock(s *Step, all []*branchBarriers, named map[string][]*branchBarriers) {
	for _, bb := range all {
		if bb.long {
			return
		}
	}
	at := make(map[*branchBarriers]int, len(all))
	head := func(bb *branchBarriers) string {
		if at[bb] < len(bb.order) {
			return bb.order[at[bb]].name
		}
		return ""
	}
	for moved := true; moved; {
		moved = false
		for _, bb := range all {
			x := head(bb)
			if x == "" || slices.ContainsFunc(named[x], func(o *branchBarriers) bool { return head(o) != x }) {
				continue
			}
			for _, o := range named[x] {
				at[o]++
			}
			moved = true
		}
	}
	for _, bb := range all {
		x := head(bb)
		if x == "" {
			continue
		}
		for _, o := range named[x] {
			if y := head(o); y != x && y != "" {
				c, d := bb.order[at[bb]], o.order[at[o]]
				v.add(c.pos, "the barriers of this parallel: would wait for each other forever: branch %s waits at barrier %s (line %d) for branch %s, which waits at barrier %s (line %d): branches must reach the barriers they share in the same order",
					bb.name, x, c.pos.Line, o.name, y, d.pos.Line)
				return
			}
		}
	}
}

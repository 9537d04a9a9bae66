package steps

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"time"
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
	// foreign are the step ids of the other branches, by id: the
	// branch's expressions may not read their results, which another
	// line of execution writes in no order this branch knows.
	foreign map[string]string
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
	ids := map[string]string{} // step id -> its branch
	for _, b := range s.Steps {
		walkSteps(Children(b), func(st *Step) {
			if st.ID != "" {
				ids[st.ID] = b.Name
			}
		})
	}
	for _, b := range s.Steps {
		v.defined = maps.Clone(before)
		v.branch = &branchCheck{name: b.Name, wrote: map[string]bool{}, foreign: map[string]string{}}
		for id, in := range ids {
			if in != b.Name {
				v.branch.foreign[id] = in
			}
		}
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
	first := map[Use]use{}
	type toldKey struct {
		what   Use
		branch string
	}
	told := map[toldKey]bool{}
	BranchUses(s, func(branch string, st *Step, what Use) {
		u, seen := first[what]
		switch {
		case !seen:
			first[what] = use{branch, st.Pos}
		case u.branch != branch && !told[toldKey{what, branch}]:
			told[toldKey{what, branch}] = true
			v.add(st.Pos, "%s is used by branch %s (line %d) and by branch %s: a device or probe belongs to one branch of a parallel:; use it in one branch, or before or after the parallel:", what, u.branch, u.pos.Line, branch)
		}
	})
}

// Use is a device or a probe a step talks to, by the name the step
// gives it.
type Use struct {
	// Kind is "device" or "probe".
	Kind, Name string
}

func (u Use) String() string { return u.Kind + " " + u.Name }

// BranchUses calls fn for each device and probe that a step of a branch
// of parallel step s talks to (its finally steps too, and the steps
// inside groups and repeats), branch by branch in the order written,
// with the branch's name and the step. Validation refuses a name used by
// two branches; a server that binds two names to one port or probe
// checks the bound names with it.
func BranchUses(s *Step, fn func(branch string, st *Step, u Use)) {
	for _, b := range s.Steps {
		walkSteps(Children(b), func(st *Step) {
			for _, u := range uses(st) {
				fn(b.Name, st, u)
			}
		})
	}
}

// uses names the devices and probes step st talks to.
func uses(st *Step) []Use {
	var out []Use
	if k, ok := LookupKind(st.Kind); ok && k.On == OnDevice && st.To != "" {
		out = append(out, Use{"device", st.To})
	}
	if usesProbe(st) && st.To != "" {
		out = append(out, Use{"probe", st.To})
	}
	if st.Exec != nil && st.Exec.Port != "" {
		out = append(out, Use{"device", st.Exec.Port})
	}
	if st.Build != nil && st.Build.Port != "" {
		out = append(out, Use{"device", st.Build.Port})
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

// branchBarriers is how one branch crosses its barriers: how often, and
// where each is first.
type branchBarriers struct {
	name   string
	counts map[string]uint64
	first  map[string]Pos
}

// barriers checks how the branches of s cross their barriers: each
// barrier named by two branches at least, as often by each, none inside a
// repeat only time bounds, and in an order that cannot wait forever.
func (v *validator) barriers(s *Step) {
	named := map[string][]*branchBarriers{}
	for _, b := range s.Steps {
		bb := &branchBarriers{name: b.Name, counts: map[string]uint64{}, first: map[string]Pos{}}
		v.countCrossings(bb, b.Steps, 1, 0)
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
		v.barrierOrder(s)
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
// refused, as how often each branch gets there depends on timing, once
// (inFor is the for: of the outermost such repeat around ss, 0 outside
// any: the steps are walked once, and each barrier told once).
func (v *validator) countCrossings(bb *branchBarriers, ss []*Step, mult uint64, inFor time.Duration) {
	for _, s := range ss {
		if name := BarrierName(s); name != "" {
			if _, seen := bb.first[name]; !seen {
				bb.first[name] = s.Pos
			}
			bb.counts[name] = satAdd(bb.counts[name], mult)
			if inFor > 0 {
				v.add(s.Pos, "barrier %s is inside a repeat that runs for: %s without every:, so how often each branch reaches it depends on timing: give the repeat a count: or an every:", name, inFor)
			}
		}
		inner, forOnly := mult, inFor
		switch {
		case s.Kind == KindRepeat && s.For > 0 && s.Every == 0:
			if forOnly == 0 {
				forOnly = s.For
			}
		case s.Kind == KindRepeat:
			n, _ := Iterations(s)
			inner = satMul(mult, n)
		case s.Matrix != nil:
			inner = satMul(mult, uint64(len(s.Matrix.Cases())))
		}
		v.countCrossings(bb, s.Steps, inner, forOnly)
	}
}

// stepRef checks a read of steps.ID in an expression of a branch: a step
// of another branch of the same parallel: runs beside it, so whether its
// result is there yet is not known. After the parallel: it is.
func (v *validator) stepRef(p Pos, id string) {
	if v.branch == nil {
		return
	}
	if other, ok := v.branch.foreign[id]; ok {
		v.add(p, "steps.%s is the result of a step of branch %s, which runs beside branch %s: a branch cannot read what another does before the parallel: ends; read it after the parallel:, or save what the branch needs before the parallel:", id, other, v.branch.name)
	}
}

package steps

// This file is validate's proof that the barriers of a parallel: step
// cannot wait on each other forever: it unrolls each branch's crossings
// (repeats and matrices multiplied out) and lets them meet as the
// barriers would. Its work is bounded twice: per branch (MaxBarrierOrder)
// and over the whole file (MaxBarrierWork).

// MaxBarrierOrder is how many barrier crossings of one branch, repeats
// unrolled, validate follows to prove that the barriers of a parallel:
// step cannot wait on each other forever; past it only their counts are
// checked, and a wait that cannot end ends at its timeout.
const MaxBarrierOrder = 10_000

// MaxBarrierWork bounds the work of following the barriers of all the
// parallel: steps of one file: each step looked at and each crossing
// unrolled or met counts one. A file past it is refused at the parallel:
// step where it ran out, as checking it would take too long; a file that
// a person writes stays far below (one parallel: step of 16 branches of
// MaxBarrierOrder crossings each takes about 320,000).
const MaxBarrierWork = 10_000_000

// barrierOrder checks the order of the barriers of parallel step s, the
// counts being right, within the file's work budget.
func (v *validator) barrierOrder(s *Step) {
	if v.barrierWork > MaxBarrierWork {
		return // told once, at the step where it ran out
	}
	o := &orderCheck{v: v, name: map[string]int32{}, siteOf: map[*Step]int32{}}
	for _, b := range s.Steps {
		order, long := o.unroll(b.Steps, nil)
		if v.barrierWork > MaxBarrierWork {
			v.spent(s)
			return
		}
		if long {
			return // only the counts are checked
		}
		o.order = append(o.order, order)
		o.branches = append(o.branches, b.Name)
	}
	o.meet(s)
	if v.barrierWork > MaxBarrierWork {
		v.spent(s)
	}
}

// spent refuses the file whose barriers took more than MaxBarrierWork to
// check, at parallel step s.
func (v *validator) spent(s *Step) {
	v.add(s.Pos, "checking the order of the barriers of this parallel: and those before it takes more than %d steps of work, the limit for one file: fewer branches, barriers or repeat iterations around barriers, or split the file", MaxBarrierWork)
}

// orderCheck is barrierOrder's look at one parallel: step. A crossing is
// the index of its barrier step in sites; a barrier, the index of its name.
type orderCheck struct {
	v        *validator
	sites    []*Step
	siteOf   map[*Step]int32
	siteName []int32
	name     map[string]int32
	names    []string
	// order is each branch's crossings in the order it makes them.
	order    [][]int32
	branches []string
}

// site is the index of barrier step s in o.sites, added when new.
func (o *orderCheck) site(s *Step) int32 {
	if i, ok := o.siteOf[s]; ok {
		return i
	}
	bar := BarrierName(s)
	id, ok := o.name[bar]
	if !ok {
		id = int32(len(o.names))
		o.name[bar] = id
		o.names = append(o.names, bar)
	}
	i := int32(len(o.sites))
	o.siteOf[s] = i
	o.sites = append(o.sites, s)
	o.siteName = append(o.siteName, id)
	return i
}

// unroll appends the crossings of ss to out in order, repeats and
// matrices unrolled; long is true past MaxBarrierOrder, or once the
// file's work budget is spent.
func (o *orderCheck) unroll(ss []*Step, out []int32) (_ []int32, long bool) {
	for _, s := range ss {
		o.v.barrierWork++
		if BarrierName(s) != "" {
			out = append(out, o.site(s))
		}
		if len(s.Steps) == 0 {
			continue
		}
		n := uint64(1)
		switch {
		case s.Kind == KindRepeat:
			n, _ = Iterations(s)
		case s.Matrix != nil:
			n = uint64(len(s.Matrix.Cases()))
		}
		body, long := o.unroll(s.Steps, nil)
		if long || uint64(len(out))+satMul(n, uint64(len(body))) > MaxBarrierOrder {
			return nil, true
		}
		for i := uint64(0); i < n && len(body) > 0; i++ {
			o.v.barrierWork += uint64(len(body))
			out = append(out, body...)
		}
		if o.v.barrierWork > MaxBarrierWork {
			return nil, true
		}
	}
	return out, false
}

// meet lets the branches' crossings meet as the barriers would, each
// crossing once: a barrier is released when every branch that names it
// is at it. It refuses an order in which some branch waits forever:
// branch a at barrier x for b, while b waits at y for a.
func (o *orderCheck) meet(s *Step) {
	nb := len(o.order)
	parts := make([][]int, len(o.names))
	for b, order := range o.order {
		seen := map[int32]bool{}
		for _, c := range order {
			if x := o.siteName[c]; !seen[x] {
				seen[x] = true
				parts[x] = append(parts[x], b)
			}
		}
	}
	at := make([]int, nb)
	head := func(b int) int32 {
		if at[b] < len(o.order[b]) {
			return o.siteName[o.order[b][at[b]]]
		}
		return -1
	}
	waiting := make([]int, len(o.names))
	var ready []int32
	arrive := func(b int) {
		if x := head(b); x >= 0 {
			if waiting[x]++; waiting[x] == len(parts[x]) {
				ready = append(ready, x)
			}
		}
	}
	for b := range nb {
		arrive(b)
	}
	for len(ready) > 0 {
		x := ready[len(ready)-1]
		ready = ready[:len(ready)-1]
		waiting[x] = 0
		for _, b := range parts[x] {
			at[b]++
		}
		o.v.barrierWork += uint64(len(parts[x]))
		for _, b := range parts[x] {
			arrive(b)
		}
	}
	for b := range nb {
		x := head(b)
		if x < 0 {
			continue
		}
		for _, p := range parts[x] {
			if y := head(p); y != x && y >= 0 {
				c, d := o.sites[o.order[b][at[b]]], o.sites[o.order[p][at[p]]]
				o.v.add(c.Pos, "the barriers of this parallel: would wait for each other forever: branch %s waits at barrier %s (line %d) for branch %s, which waits at barrier %s (line %d): branches must reach the barriers they share in the same order",
					o.branches[b], o.names[x], c.Pos.Line, o.branches[p], o.names[y], d.Pos.Line)
				return
			}
		}
	}
}

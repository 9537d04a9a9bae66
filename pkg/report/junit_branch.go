package report

import (
	"fmt"
	"strings"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/hilrun/hilrun/pkg/results"
)

// A parallel: step that is a top-level entry is one testcase per branch,
// "01 parallel [sender]", each with its branch's steps, in the order the
// branches are written. Their steps finish interleaved, so each branch
// gathers its steps in a case builder of its own, and the cases wait for
// the parallel step's own record, which comes last, to be emitted in
// order. A parallel step inside a group is part of the group's testcase,
// whose problems name the branch in their paths ("step 3.1.sender.0").

// branchCases are the branches of the top-level parallel step being read.
type branchCases struct {
	key   string // the parallel step's path
	order []string
	by    map[string]*branchCase
}

// branchCase is one branch's builder and the cases it made.
type branchCase struct {
	cb    *caseBuilder
	cases []*junit.Testcase
	meas  []*measuredCase
}

// topBranch returns the branch key ("3.sender") and the parallel step's
// path ("3") of a step at path inside a branch of a top-level parallel:
// step, ok false for any other path.
func topBranch(path string) (branch, parallel string, ok bool) {
	prefix := ""
	if rest, cut := strings.CutPrefix(path, finallyPrefix); cut {
		prefix, path = finallyPrefix, rest
	}
	segs := strings.SplitN(path, ".", 3)
	if len(segs) < 2 || !allDigits(segs[0]) || allDigits(segs[1]) || segs[1] == "finally" || segs[1] == "before_retry" {
		return "", "", false
	}
	return prefix + segs[0] + "." + segs[1], prefix + segs[0], true
}

func allDigits(s string) bool {
	return s != "" && leadingDigits(s) == len(s)
}

// addBranch takes a step of a branch of a top-level parallel: step.
func (cb *caseBuilder) addBranch(key, parallel string, st *results.Step) {
	if cb.key != "" {
		cb.flush()
	}
	if cb.par == nil || cb.par.key != parallel {
		cb.par = &branchCases{key: parallel, by: map[string]*branchCase{}}
	}
	bc := cb.par.by[key]
	if bc == nil {
		bc = &branchCase{}
		sub := newCaseBuilder(cb.seq, cb.opts, func(tc *junit.Testcase) { bc.cases = append(bc.cases, tc) })
		if cb.emitMeasured != nil {
			sub.emitMeasured = func(mc *measuredCase) { bc.meas = append(bc.meas, mc) }
		}
		sub.branchKey = key
		bc.cb = sub
		cb.par.by[key] = bc
		cb.par.order = append(cb.par.order, key)
	}
	bc.cb.add(st)
}

// finishBranches emits the cases of the branches of top, the parallel
// step's own record (nil when it never came), named after it, in the
// order its branches are written.
func (cb *caseBuilder) finishBranches(top *results.Step) {
	par := cb.par
	cb.par = nil
	order := par.order
	title := "parallel"
	if top != nil {
		if names, ok := top.Data["branches"].([]any); ok && len(names) == len(order) {
			order = order[:0:0]
			for _, n := range names {
				order = append(order, par.key+"."+fmt.Sprint(n))
			}
		}
		// An unnamed parallel step's title is "parallel a, b".
		if top.Name != "" && !strings.HasPrefix(top.Name, "parallel ") {
			title = cleanLine(top.Name)
		}
	}
	for i, key := range order {
		bc := par.by[key]
		if bc == nil {
			continue
		}
		bc.cb.flush()
		name := entryIndex(par.key, cb.seq) + " " + title + " [" + cleanLine(strings.TrimPrefix(key, par.key+".")) + "]"
		if cb.cases == 0 && i == 0 && cb.carry != nil && len(bc.cases) > 0 && bc.cases[0].Skipped != nil {
			c := bc.cases[0]
			c.Skipped, c.Error, c.Failure = nil, cb.carry.Error, cb.carry.Failure
		}
		for _, tc := range bc.cases {
			tc.Name = name
			cb.emit(tc)
		}
		for _, mc := range bc.meas {
			mc.Name = name
			cb.emitMeasured(mc)
		}
		if cb.cases == 0 && i == 0 && bc.cb.firstSkipped {
			cb.firstSkipped = true
		}
		cb.problem = cb.problem || bc.cb.problem
	}
	*cb = caseBuilder{seq: cb.seq, opts: cb.opts, emit: cb.emit, emitMeasured: cb.emitMeasured, problem: cb.problem,
		cases: cb.cases + len(order), firstSkipped: cb.firstSkipped, carry: cb.carry}
}

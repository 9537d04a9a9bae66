package runner

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
)

// branchRun is what a line of execution knows of the branch of a
// parallel: step it runs.
type branchRun struct {
	name  string
	block *block
	// onFailure is the parallel: step's (steps.ParallelOnFailure).
	onFailure steps.OnFailure
	// wrote names the variables the branch set, which the steps after
	// the block read as branches.NAME.var; ids the steps with an id: it
	// ran, whose results they read as steps.ID.
	wrote map[string]bool
	ids   []string
	// finally is set while the branch's finally steps run: a
	// cancellation skips none of them. finallySteps counts the steps
	// they ran, their own budget of Options.MaxSteps.
	finally      bool
	finallySteps uint64
}

// parallel runs the branches of parallel step s at once, each on a line
// of execution of its own (a goroutine), and waits for all of them: the
// step's status is the worst of theirs. Every branch's steps and events
// use the run's one clock, so their offsets line up.
func (r *run) parallel(ctx context.Context, s *steps.Step, res *StepResult, path, group string) {
	blk := newBlock(s)
	onFailure := steps.ParallelOnFailure(r.seq, s)
	lines := make([]*run, len(s.Steps))
	done := make([]*StepResult, len(s.Steps))
	for i, b := range s.Steps {
		lines[i] = r.fork(b.Name, blk, onFailure)
	}
	var wg sync.WaitGroup
	for i, b := range s.Steps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			done[i] = lines[i].runBranch(ctx, b, path+"."+b.Name, group)
		}()
	}
	wg.Wait()
	r.join(lines)
	st := Passed
	for i := range s.Steps {
		if done[i].Status != Skipped {
			st = worst(st, done[i].Status)
		}
	}
	res.Status = st
	res.Data = map[string]any{"branches": branchList(s)}
	if why := blk.why(); why != "" {
		res.Message = why + "; the other branches were cancelled"
	}
}

// branchList names the branches of parallel step s in the order written,
// the parallel step's data "branches" that reports order them by.
func branchList(s *steps.Step) []any {
	names := make([]any, len(s.Steps))
	for i, b := range s.Steps {
		names[i] = b.Name
	}
	return names
}

// fork makes the line of execution of branch name: the run's shared
// state, and copies of this line's own, so that the branch reads the
// variables, results and console cursors as they are when the block
// starts and writes its own.
func (r *run) fork(name string, blk *block, onFailure steps.OnFailure) *run {
	return &run{
		shared:   r.shared,
		cursor:   maps.Clone(r.cursor),
		sent:     maps.Clone(r.sent),
		vars:     maps.Clone(r.vars),
		stepRes:  maps.Clone(r.stepRes),
		attempts: slices.Clone(r.attempts),
		caseTags: r.caseTags,
		branch:   &branchRun{name: name, block: blk, onFailure: onFailure, wrote: map[string]bool{}},
	}
}

// within is this line as branch name sees it, for reporting the steps of
// a branch that does not run (no block: nothing waits for it).
func (r *run) within(name string) *run {
	c := *r
	c.branch = &branchRun{name: name, wrote: map[string]bool{}}
	return &c
}

// join takes back what the branches left once they all ended: where
// each console's next expect starts (a device belongs to one branch, so
// whatever changed was its branch's), the results of their steps with an
// id, and their variables, as branches.NAME.var.
func (r *run) join(lines []*run) {
	all := map[string]any{}
	if prev, ok := r.vars["branches"].(map[string]any); ok {
		maps.Copy(all, prev)
	}
	for _, br := range lines {
		for k, v := range br.cursor {
			if old, ok := r.cursor[k]; !ok || old != v {
				r.cursor[k] = v
			}
		}
		for k, v := range br.sent {
			if old, ok := r.sent[k]; !ok || old != v {
				r.sent[k] = v
			}
		}
		for _, id := range br.branch.ids {
			r.stepRes[id] = br.stepRes[id]
		}
		saved := make(map[string]any, len(br.branch.wrote))
		for name := range br.branch.wrote {
			saved[name] = br.vars[name]
		}
		all[br.branch.name] = saved
	}
	r.setLocal("branches", all)
}

// runBranch runs branch b at path: its steps, then, however they ended,
// its finally steps.
func (r *run) runBranch(ctx context.Context, b *steps.Step, path, group string) *StepResult {
	res := r.newResult(b, path, group)
	cp := *res
	r.emit(Event{Type: StepStarted, Step: &cp})
	started := time.Now()
	r.open = append(r.open, Passed)
	r.steps(ctx, b.Steps, path+".", group)
	why := r.cancelled()
	// An interrupt that stopped the branch before it ended is the
	// branch's outcome, however its steps were left (a wait interrupted,
	// or the next step not run as the block was stopped by it).
	interrupted := ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled)
	// Whatever barrier it did not reach, it never will.
	r.branch.block.leave(r.branch.name)
	if len(b.Finally) > 0 {
		fctx := r.opts.FinallyContext
		if fctx == nil {
			fctx = context.WithoutCancel(ctx)
		}
		fctx = r.withIdle(fctx)
		r.branch.finally = true
		for i, s := range b.Finally {
			r.step(fctx, s, path+".finally."+strconv.Itoa(i), group)
		}
	}
	r.endTimed()
	res.Status = r.closeContainer()
	res.Duration = time.Since(started)
	if why != "" {
		res.Message = "cancelled: " + why
	}
	if interrupted && (res.Status == Passed || res.Status == Skipped) {
		res.Status, res.Message = Interrupted, "interrupted"
	}
	r.finish(res)
	return res
}

// branchName is the name of the branch this line runs, "" outside any.
func (r *run) branchName() string {
	if r.branch == nil {
		return ""
	}
	return r.branch.name
}

// cancelled says why this line's next step must not run: another
// branch's failure cancelled its block. It is "" outside a branch, in a
// branch's finally steps, and for the branch that failed.
func (r *run) cancelled() string {
	if r.branch == nil || r.branch.finally || r.branch.block == nil {
		return ""
	}
	return r.branch.block.cancelledFor(r.branch.name)
}

// stopBranch cancels the other branches of this line's block, as step
// res stopped this branch.
func (r *run) stopBranch(res *StepResult) {
	if r.branch == nil || r.branch.finally || r.branch.block == nil {
		return
	}
	word := "failed"
	switch res.Status {
	case Errored:
		word = "had an error"
	case Interrupted:
		word = "was interrupted"
	}
	r.branch.block.cancel(r.branch.name, "branch "+r.branch.name+" "+word+" at step "+res.Path)
}

// branchVar looks up branches.NAME.var (rest is NAME.var).
func (r *run) branchVar(rest string) (any, bool) {
	name, v, _ := strings.Cut(rest, ".")
	all, ok := r.vars["branches"].(map[string]any)
	if !ok {
		return nil, false
	}
	vars, ok := all[name].(map[string]any)
	if !ok {
		return nil, false
	}
	val, ok := vars[v]
	return val, ok
}

package runner

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// lookup resolves ${name} references.
func (r *run) lookup(name string) (any, bool) {
	if env, ok := strings.CutPrefix(name, "env."); ok {
		return r.getenv(env), true
	}
	if v, ok := r.secret(name); ok {
		return v, true
	}
	if rest, ok := strings.CutPrefix(name, "branches."); ok {
		return r.branchVar(rest)
	}
	v, ok := r.vars[name]
	return v, ok
}

// steps runs a list of steps. It returns false when the sequence (or the
// branch) must stop. In a branch, a step that stops it cancels the other
// branches, which stop before their next step.
func (r *run) steps(ctx context.Context, ss []*steps.Step, prefix, group string) bool {
	for i, s := range ss {
		if why := r.cancelled(); why != "" {
			r.skipAs(ss, i, prefix, group, "cancelled: "+why)
			return false
		}
		path := prefix + strconv.Itoa(i)
		res := r.step(ctx, s, path, group)
		if r.stops(s, res) || ctx.Err() != nil {
			r.skip(ss, i+1, prefix, group)
			return false
		}
	}
	return true
}

// stops reports whether step s, which ended as res, stops the list it is
// in: an error or an interrupt does, a failure unless on_failure is
// continue (or s is a matrix case).
func (r *run) stops(s *steps.Step, res *StepResult) bool {
	return res.Status == Errored || res.Status == Interrupted ||
		(res.Status == Failed && r.onFailure() == steps.Stop && s.Case == nil)
}

// onFailure is what a failed step does to the steps after it: the
// branch's on_failure in a branch, else the sequence's.
func (r *run) onFailure() steps.OnFailure {
	if r.branch != nil {
		return r.branch.onFailure
	}
	return r.seq.OnFailure
}

// skip reports ss[from:], which did not run, so reports list every test
// case. ss is in group; a group that did not run reports its steps first,
// as one that runs does, so the reports list the same steps however far a
// run got.
func (r *run) skip(ss []*steps.Step, from int, prefix, group string) {
	r.skipAs(ss, from, prefix, group, "not run")
}

// skipAs is skip with the reason why: a step that says why it is skipped
// (Step.Skip) is reported with its own.
func (r *run) skipAs(ss []*steps.Step, from int, prefix, group, why string) {
	for i := from; i < len(ss); i++ {
		r.skipStep(ss[i], prefix+strconv.Itoa(i), group, why)
	}
}

// skipStep reports s, at path in group, as skipped for why.
func (r *run) skipStep(s *steps.Step, path, group, why string) *StepResult {
	if s.Skip != "" {
		why = s.Skip
	}
	g := group
	var c StepResult // a group's tags and matrix values
	switch s.Kind {
	case steps.KindGroup:
		g = joinGroup(group, s.Name)
		outer := r.enterCase(s, &c)
		r.skipAs(s.Steps, 0, path+".", g, why)
		r.leaveCase(outer)
	case steps.KindParallel:
		for _, b := range s.Steps {
			r.within(b.Name).skipStep(b, path+"."+b.Name, group, why)
		}
	case steps.KindBranch:
		r.skipAs(s.Steps, 0, path+".", group, why)
		r.skipAs(s.Finally, 0, path+".finally.", group, why)
	case steps.KindBarrier, steps.KindRepeat:
		// A repeat's steps are not reported one by one: its barriers'
		// crossings are all absent at once.
		r.absent(s, why)
	}
	res := r.newResult(s, path, g)
	res.Tags, res.Params = c.Tags, c.Params
	// A step that did not run has no values: its name stays as
	// written.
	res.Name = writtenTitle(s)
	if s.Kind == steps.KindParallel {
		res.Data = map[string]any{"branches": branchList(s)}
	}
	res.Status = Skipped
	res.Message = why
	r.finish(res)
	return res
}

func (r *run) newResult(s *steps.Step, path, group string) *StepResult {
	name := r.title(s)
	if s.Kind == steps.KindPower && s.Name == "" && s.Power != nil && s.Power.Target == "" {
		// The board comes from the bench the sequence is bound to.
		name = strings.TrimSpace(s.Power.Action + " " + steps.PowerTarget(r.seq, s.Power))
	}
	return &StepResult{
		Path: path, Kind: string(s.Kind), Name: name, Group: group, ID: s.ID, Branch: r.branchName(),
		File: s.Pos.File, Line: s.Pos.Line, Column: s.Pos.Col,
		Started: time.Since(r.start),
	}
}

// finish records a finished step: its index, the attempts it counts in,
// the run's status and the open container's, and its event, the shared
// parts at once so that the events of branches come in index order.
func (r *run) finish(res *StepResult) {
	if res.Status != Skipped {
		if n := len(r.open); n > 0 {
			r.open[n-1] = worst(r.open[n-1], res.Status)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	res.Index = r.index
	r.index++
	r.noteAttempt(res)
	if r.opts.KeepSteps {
		r.res.Steps = append(r.res.Steps, *res)
	}
	if res.Status != Skipped {
		r.res.Status = worst(r.res.Status, res.Status)
	}
	cp := *res
	r.emitLocked(Event{Type: StepFinished, Step: &cp})
}

// step runs one step and records its result.
func (r *run) step(ctx context.Context, s *steps.Step, path, group string) *StepResult {
	if s.Skip != "" {
		// Deselected or quarantined: reported, never run.
		return r.skipStep(s, path, group, s.Skip)
	}
	if s.Kind == steps.KindGroup {
		group = joinGroup(group, s.Name)
	}
	if s.Kind != steps.KindSend {
		r.endTimed() // only a send writes on the thread a wait ended on
	}
	wrote := r.wrote
	r.wrote = time.Time{}
	if s.Kind == steps.KindDelay {
		r.wrote = wrote
	}
	res := r.newResult(s, path, group)
	if name := r.unopened(s); name != "" {
		// A finally step for a device that never opened: the open error
		// is the run's error, and this step could not have run.
		res.Status = Skipped
		res.Message = "not run: " + name + " did not open"
		r.finish(res)
		return res
	}
	// The clock newResult read: Started and Duration count from one
	// reading.
	started := r.start.Add(res.Started)
	cp := *res
	cp.Timeout = r.shownTimeout(s)
	r.emit(Event{Type: StepStarted, Step: &cp})

	var err error
	switch s.Kind {
	case steps.KindGroup:
		for _, v := range s.Case {
			r.setLocal(v.Key, v.Value)
		}
		outer := r.enterCase(s, res)
		r.runGroup(ctx, s, res, path, group)
		r.leaveCase(outer)
	case steps.KindParallel:
		r.parallel(ctx, s, res, path, group)
	case steps.KindRepeat:
		r.open = append(r.open, Passed)
		err = r.repeat(ctx, s, res, group)
		res.Status = r.closeContainer()
	default:
		if err = r.countStep(); err == nil {
			err = r.leaf(ctx, s, res)
		}
		var hit *failOnHit
		if err == nil && errors.As(context.Cause(ctx), &hit) {
			// fail_on matched while this step ran, on a console it did
			// not wait on: the step it happened in fails.
			err = context.Cause(ctx)
		}
	}
	res.Duration = time.Since(started)
	if s.Kind != steps.KindGroup {
		r.classify(ctx, res, err)
	}
	if r.stops(s, res) {
		// Before the step's event: the other branches are cancelled by
		// the time anyone hears of the failure.
		r.stopBranch(res)
	}
	if s.ID != "" {
		r.stepRes[s.ID] = resultMap(res)
		if r.branch != nil {
			r.branch.ids = append(r.branch.ids, s.ID)
		}
	}
	r.finish(res)
	return res
}

// repeat runs the steps of a repeat step Count times, or for For, Every
// apart when it says so; group is the group it is in.
func (r *run) repeat(ctx context.Context, s *steps.Step, res *StepResult, group string) error {
	t0 := time.Now()
	var maxLate time.Duration
	n := 0
	for i := 0; ; i++ {
		if s.Count > 0 && i >= s.Count {
			break
		}
		if s.Every > 0 {
			// Deadlines are absolute, so the period does not drift with
			// the time each iteration takes.
			deadline := t0.Add(time.Duration(i) * s.Every)
			if s.For > 0 && deadline.Sub(t0) >= s.For {
				break
			}
			if err := r.sleepTimed(ctx, deadline); err != nil {
				return err
			}
			if late := time.Since(deadline); late > maxLate {
				maxLate = late
			}
		} else if s.For > 0 && time.Since(t0) >= s.For {
			break
		}
		if s.As != "" {
			r.setLocal(s.As, i)
		}
		n++
		ok := r.steps(ctx, s.Steps, fmt.Sprintf("%s#%d.", res.Path, i), group)
		if !ok {
			break
		}
	}
	res.Data = map[string]any{"iterations": n}
	if s.Every > 0 {
		res.Data["max_late_us"] = maxLate.Microseconds()
		res.Data["every_ms"] = ms(s.Every)
	}
	if ctx.Err() != nil && r.open[len(r.open)-1] == Passed {
		return context.Cause(ctx)
	}
	return nil
}

// closeContainer ends the innermost group or repeat being run and returns
// the worst status of the steps it held, Passed when none ran.
func (r *run) closeContainer() Status {
	n := len(r.open)
	st := r.open[n-1]
	r.open = r.open[:n-1]
	return st
}

func resultMap(res *StepResult) map[string]any {
	m := map[string]any{}
	for k, v := range res.Data {
		m[k] = v
	}
	for k, v := range res.Saved {
		m[k] = v
	}
	m["status"] = string(res.Status)
	m["duration_ms"] = float64(res.Duration.Microseconds()) / 1000
	m["message"] = res.Message
	return m
}

// stepError is a failure the device caused (Failed), as opposed to the
// bench (any other error is Errored).
type stepError struct {
	msg      string
	expected string
	received string
}

func (e *stepError) Error() string { return e.msg }

// classify sets the step's status from the error it ended with.
func (r *run) classify(ctx context.Context, res *StepResult, err error) {
	if res.Status == Failed || res.Status == Errored {
		return
	}
	if err == nil {
		if res.Status == "" {
			res.Status = Passed
		}
		return
	}
	var se *stepError
	var fe *stream.FailOnError
	var hit *failOnHit
	switch {
	case errors.As(err, &hit):
		res.Status = Failed
		res.Message = hit.Error()
		if c := r.consol[hit.console]; c != nil {
			res.Received = excerpt(c, hit.hit.Offset)
		}
	case errors.As(err, &se):
		res.Status = Failed
		res.Message = se.msg
		res.Expected = se.expected
		res.Received = se.received
	case errors.As(err, &fe):
		res.Status = Failed
		res.Message = fe.Error()
	case errors.Is(err, ErrSequenceTimeout):
		res.Status = Failed
		res.Message = err.Error()
	case ctx.Err() != nil && errors.Is(context.Cause(ctx), context.Canceled) && errors.Is(err, context.Canceled):
		res.Status = Interrupted
		res.Message = "interrupted"
	default:
		res.Status = Errored
		res.Message = err.Error()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if res.Status == Failed && r.res.Error == "" && errors.Is(err, ErrSequenceTimeout) {
		r.res.Error = err.Error()
	}
	if res.Status == Errored && r.res.Error == "" {
		r.res.Error = res.Message
	}
	if res.Status == Errored && r.finallyErr == "" && strings.HasPrefix(res.Path, "finally.") {
		r.finallyErr = fmt.Sprintf("finally step %s %s error: %s", res.Path, res.Kind, res.Message)
	}
}

package steps

import "gopkg.in/yaml.v3"

// MaxRetries is the most retries a sequence or a group may ask for.
const MaxRetries = 20

// Retry is what a sequence or a group says about running again after an
// attempt that did not pass: retries: N and before_retry: [...]. A retry
// reruns the whole sequence or group from its first step, with its
// BeforeRetry steps first; the variables the failed attempt saved are
// discarded.
type Retry struct {
	// Count is how many times the scope may run again: the attempts are
	// Count+1 at most.
	Count int
	// Set says retries: was written. A sequence that does not say it
	// takes the run's (hilrun run --retries); one that says retries: 0
	// is never retried.
	Set bool
	// BeforeRetry runs before every attempt but the first: reset the
	// board, reopen a console.
	BeforeRetry []*Step
	Pos         Pos
}

// Retries is how many times s runs again: 0 without retries:.
func (r *Retry) Retries() int {
	if r == nil {
		return 0
	}
	return r.Count
}

// Before is the before_retry steps of r, nil without them.
func (r *Retry) Before() []*Step {
	if r == nil {
		return nil
	}
	return r.BeforeRetry
}

// Children are the steps inside s that run as part of it: its steps, then
// its before_retry steps, then (for a branch of a parallel: step) its
// finally steps. Walkers of the step tree go through them.
func Children(s *Step) []*Step {
	before := s.Retry.Before()
	if len(before) == 0 && len(s.Finally) == 0 {
		return s.Steps
	}
	out := make([]*Step, 0, len(s.Steps)+len(before)+len(s.Finally))
	return append(append(append(out, s.Steps...), before...), s.Finally...)
}

// retryKey decodes retries: or before_retry: of a sequence or a group
// into *r, made when first needed; false for any other key.
func (d *decoder) retryKey(r **Retry, key string, v *yaml.Node) bool {
	switch key {
	case "retries":
		if *r == nil {
			*r = &Retry{Pos: d.pos(v)}
		}
		(*r).Count, _ = d.integer(v, "retries", 0, MaxRetries)
		(*r).Set, (*r).Pos = true, d.pos(v)
	case "before_retry":
		if *r == nil {
			*r = &Retry{Pos: d.pos(v)}
		}
		(*r).BeforeRetry = d.steps(v, "before_retry")
	default:
		return false
	}
	return true
}

// finishGroupRetry checks a group's retries: and before_retry: together.
func (d *decoder) finishGroupRetry(s *Step, keys stepKeys) {
	if keys.has["before_retry"] && !keys.has["retries"] {
		d.add(s.Pos, "before_retry: runs before a retry, but this group has no retries: add retries: N")
	}
}

// checkRetry is validate's look at the retries of a scope: its
// before_retry steps run after a failed attempt, whose variables are
// discarded, so they see only what was defined before the scope (defined
// here), and what they define is not seen by the scope's steps, which
// also run without them on the first attempt. inRepeat says the scope is
// inside a repeat, which refuses retries.
func (v *validator) checkRetry(r *Retry, inRepeat bool) {
	if r == nil {
		return
	}
	if inRepeat && r.Count > 0 {
		v.add(r.Pos, "retries: is refused inside a repeat, whose iterations are counted as they run: put retries: on the group or sequence around the repeat")
	}
	v.retryInBranch(r)
	saved := v.defined
	v.defined = make(map[string]bool, len(saved))
	for k := range saved {
		v.defined[k] = true
	}
	v.steps(r.BeforeRetry)
	v.defined = saved
}

// retried counts the executions of ss, the steps of a scope with retries
// r, at most: every attempt, and the before_retry steps of every retry.
func retried(r *Retry, ss []*Step) (uint64, bool) {
	body, b := executions(ss)
	n := r.Retries()
	if n == 0 {
		return body, b
	}
	before, bb := executions(r.BeforeRetry)
	return satAdd(satMul(uint64(n)+1, body), satMul(uint64(n), before)), b && bb
}

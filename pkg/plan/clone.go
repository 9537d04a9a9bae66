package plan

import "github.com/hilrun/hilrun/pkg/steps"

// cloneSteps gives seq a step tree of its own: every step, and the specs
// whose paths and ports binding may fill in (memory, exec, build with its
// image and PlatformIO project), are copies; what binding never changes
// (templates, expressions, patterns) is shared.
func cloneSteps(seq *steps.Sequence) {
	seq.Steps = cloneList(seq.Steps)
	seq.Finally = cloneList(seq.Finally)
	if seq.Retry != nil {
		r := *seq.Retry
		r.BeforeRetry = cloneList(seq.Retry.BeforeRetry)
		seq.Retry = &r
	}
}

func cloneList(list []*steps.Step) []*steps.Step {
	if list == nil {
		return nil
	}
	out := make([]*steps.Step, len(list))
	for i, s := range list {
		c := *s
		if s.Mem != nil {
			m := *s.Mem
			c.Mem = &m
		}
		if s.Exec != nil {
			e := *s.Exec
			c.Exec = &e
		}
		if s.Build != nil {
			b := *s.Build
			if b.Image != nil {
				im := *b.Image
				b.Image = &im
			}
			if b.PIO != nil {
				p := *b.PIO
				b.PIO = &p
			}
			c.Build = &b
		}
		c.Steps, c.Finally = cloneList(s.Steps), cloneList(s.Finally)
		if s.Retry != nil {
			r := *s.Retry
			r.BeforeRetry = cloneList(s.Retry.BeforeRetry)
			c.Retry = &r
		}
		out[i] = &c
	}
	return out
}

package steps

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// KindParallel runs named branches at once, each a list of steps that
// talks to devices and probes of its own: parallel: {a: [...], b: [...]}.
// Its Steps are its branches (KindBranch) in the order written; a branch
// may also be a mapping {steps: [...], finally: [...]}. Barriers
// (KindBarrier) inside branches line them up; the checks are in
// parallel_check.go.
const KindParallel Kind = "parallel"

// KindBranch is one branch of a parallel: step: its Name is the branch's
// name, its Steps and Finally its own. It is no kind a step is written
// as, so it is not in the kind table: it stands for the branch in the
// step tree, in results (path PARALLEL.NAME) and in reports.
const KindBranch Kind = "branch"

// MaxBranches bounds the branches of one parallel: step.
const MaxBranches = 16

// ParallelArgs is what a parallel step holds in Step.Args.
type ParallelArgs struct {
	// OnFailure says whether a branch's failure cancels the other
	// branches (Stop) or leaves them running (Continue); "" takes the
	// sequence's on_failure.
	OnFailure OnFailure
}

func init() {
	registerKind(KindSpec{
		Kind:    KindParallel,
		Keys:    []string{"parallel"},
		Allowed: []string{"on_failure"},
		Doc:     "run named branches of steps at once, each on devices of its own",
		Example: `{"parallel": {"a": [{"barrier": "go"}, {"send": "tx hello", "to": "a"}], "b": [{"barrier": "go"}, {"expect": "rx hello", "to": "b"}]}}`,
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			switch key {
			case "parallel":
				s.Steps = d.branches(v)
			case "on_failure":
				s.Args = &ParallelArgs{OnFailure: d.onFailure(v)}
			default:
				return false
			}
			return true
		},
		check: (*validator).parallel,
		title: func(s *Step) string {
			var names []string
			for _, b := range s.Steps {
				names = append(names, b.Name)
			}
			return clip("parallel " + strings.Join(names, ", "))
		},
	})
}

// ParallelOnFailure is what a failing branch of parallel step s does to
// the others: its own on_failure, else the sequence's.
func ParallelOnFailure(seq *Sequence, s *Step) OnFailure {
	if a, ok := s.Args.(*ParallelArgs); ok && a.OnFailure != "" {
		return a.OnFailure
	}
	return seq.OnFailure
}

// branchKeys are the keys of a branch written as a mapping.
var branchKeys = []string{"steps", "finally"}

// reservedBranchNames cannot name a branch: a branch's name is a part of
// its steps' paths, where these name other lists.
var reservedBranchNames = []string{"finally", "before_retry"}

// branches reads the value of parallel: a mapping of branch names to step
// lists, or to {steps, finally}.
func (d *decoder) branches(v *yaml.Node) []*Step {
	if v.Kind != yaml.MappingNode {
		d.add(d.pos(v), "parallel must map branch names to lists of steps, such as {a: [...], b: [...]}, found %s", kindName(v))
		return nil
	}
	switch n := len(v.Content) / 2; {
	case n < 2:
		d.add(d.pos(v), "a parallel needs at least two branches, found %d: a single list of steps runs in order without it", n)
	case n > MaxBranches:
		d.add(d.pos(v), "a parallel has %d branches, more than the limit of %d", n, MaxBranches)
		return nil
	}
	ps := d.pairs(v)
	var out []*Step
	for _, p := range ps {
		name := p.key.Value
		switch {
		case !validName(name):
			d.add(d.pos(p.key), "branch name %q must be a name of letters, digits and underscores", name)
			continue
		case slices.Contains(reservedBranchNames, name):
			d.add(d.pos(p.key), "branch name %q is kept for the %s steps of a list: name the branch otherwise", name, name)
			continue
		}
		b := &Step{Kind: KindBranch, Pos: d.pos(p.key), Name: name}
		d.branch(b, p.val)
		out = append(out, b)
	}
	return out
}

// branch reads one branch's steps: a list, or {steps, finally}.
func (d *decoder) branch(b *Step, v *yaml.Node) {
	what := "branch " + b.Name
	list := v
	switch v.Kind {
	case yaml.SequenceNode:
		b.Steps = d.steps(v, what)
	case yaml.MappingNode:
		list = nil
		for _, p := range d.pairs(v) {
			switch p.key.Value {
			case "steps":
				list, b.Steps = p.val, d.steps(p.val, what+" steps")
			case "finally":
				b.Finally = d.steps(p.val, what+" finally")
			default:
				d.unknownKey(p.key, what, branchKeys)
			}
		}
		if list == nil {
			d.add(d.pos(v), "%s needs a steps: list", what)
			return
		}
	default:
		d.add(d.pos(v), "%s must be a list of steps, or a mapping such as {steps: [...], finally: [...]}, found %s", what, kindName(v))
		return
	}
	if list.Kind == yaml.SequenceNode && len(list.Content) == 0 {
		d.add(d.pos(list), "%s has no steps: give it some, or leave it out", what)
	}
}

package steps

import "gopkg.in/yaml.v3"

// KindBarrier waits, inside a branch of a parallel: step, until every
// branch that names the same barrier has arrived at it: barrier: ready,
// with timeout: bounding the wait (the sequence's expect_timeout when it
// says none). The branches then go on together. A barrier crossed several
// times (in a repeat) meets the other branches' crossings in turn: the
// first with the first, the second with the second.
const KindBarrier Kind = "barrier"

// BarrierArgs is what a barrier step holds in Step.Args.
type BarrierArgs struct {
	// Name is the barrier's name, shared by the branches that meet at it.
	Name string
}

func init() {
	registerKind(KindSpec{
		Kind:    KindBarrier,
		Keys:    []string{"barrier"},
		Allowed: []string{"timeout"},
		Doc:     "wait until every branch that names this barrier arrives",
		Example: `{"barrier": "ready", "timeout": "10s"}`,
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			if key != "barrier" {
				return false
			}
			name, ok := d.str(v, "barrier")
			switch {
			case !ok:
			case !validName(name):
				d.add(d.pos(v), "barrier %q must be a name of letters, digits and underscores", name)
			default:
				s.Args = &BarrierArgs{Name: name}
			}
			return true
		},
		check: (*validator).barrier,
		title: func(s *Step) string {
			if a, ok := s.Args.(*BarrierArgs); ok {
				return a.Name
			}
			return "barrier"
		},
	})
}

// BarrierName is the name of barrier step s, "" for any other step.
func BarrierName(s *Step) string {
	if a, ok := s.Args.(*BarrierArgs); ok && s.Kind == KindBarrier {
		return a.Name
	}
	return ""
}

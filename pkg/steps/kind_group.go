package steps

import (
	"slices"

	"gopkg.in/yaml.v3"
)

// KindGroup names a list of steps: group: boot, steps: [...]. The
// group's name is the step's Name; reports list its steps under it.
const KindGroup Kind = "group"

func init() {
	registerKind(KindSpec{
		Kind:    KindGroup,
		Keys:    []string{"group"},
		Doc:     "name a list of steps",
		Allowed: []string{"steps", "tags", "matrix", "retries", "before_retry"},
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			switch key {
			case "group":
				s.Name, _ = d.text(v, "group name")
			case "steps":
				s.Steps = d.steps(v, "steps")
			case "tags":
				s.Tags = d.tags(v)
			case "matrix":
				s.Matrix = d.matrix(v)
			default:
				return d.retryKey(&s.Retry, key, v)
			}
			return true
		},
		finish: func(d *decoder, s *Step, keys stepKeys) {
			d.finishSteps(s, keys)
			d.finishGroupRetry(s, keys)
		},
		check: func(v *validator, s *Step) {
			v.checkRetry(s.Retry, v.repeats > 0)
			v.matrix(s.Matrix, v.matrixKeys)
			if s.Matrix != nil {
				outer := v.matrixKeys
				v.matrixKeys = append(slices.Clip(outer), s.Matrix.Names()...)
				defer func() { v.matrixKeys = outer }()
			}
			v.steps(s.Steps)
		},
	})
}

package steps

import "gopkg.in/yaml.v3"

// KindRepeat runs its steps several times, or for a time: repeat: 10, or
// repeat: {count, every, for, as}, with steps: [...]. See Step.Count,
// Step.Every, Step.For and Step.As.
const KindRepeat Kind = "repeat"

func init() {
	registerKind(KindSpec{
		Kind:    KindRepeat,
		Keys:    []string{"repeat"},
		Doc:     "run steps several times, or for a time",
		Allowed: []string{"steps"},
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			switch key {
			case "repeat":
				d.repeat(s, v)
			case "steps":
				s.Steps = d.steps(v, "steps")
			default:
				return false
			}
			return true
		},
		finish: (*decoder).finishSteps,
		check: func(v *validator, s *Step) {
			if s.As != "" {
				v.define(s.As)
			}
			v.repeats++
			v.steps(s.Steps)
			v.repeats--
		},
		title: func(*Step) string { return "repeat" },
	})
}

// repeatKeys are the keys of repeat: {...}.
var repeatKeys = []string{"count", "every", "for", "as"}

// repeat reads repeat: a count, or {count, every, for, as}.
func (d *decoder) repeat(s *Step, v *yaml.Node) {
	if v.Kind == yaml.ScalarNode && v.Tag == "!!int" {
		s.Count, _ = d.integer(v, "repeat", 1, 100_000_000)
		return
	}
	if v.Kind != yaml.MappingNode {
		d.add(d.pos(v), "repeat must be a count or a mapping such as {count: 10, every: 100ms}, found %s", kindName(v))
		return
	}
	for _, p := range d.pairs(v) {
		switch p.key.Value {
		case "count":
			s.Count, _ = d.integer(p.val, "count", 1, 100_000_000)
		case "every":
			s.Every, _ = d.durationIn(p.val, "every", delayRange)
		case "for":
			s.For, _ = d.durationIn(p.val, "for", runRange)
		case "as":
			name, ok := d.str(p.val, "as")
			if ok && !validName(name) {
				d.add(d.pos(p.val), "as: %q is not a variable name", name)
			} else {
				s.As = name
			}
		default:
			d.unknownKey(p.key, "repeat", repeatKeys)
		}
	}
	if s.Count == 0 && s.For == 0 {
		d.add(d.pos(v), "repeat needs a count or a for: duration")
	}
}

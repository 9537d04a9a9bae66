package steps

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// allStepKeys lists every key that makes a step, sorted.
func allStepKeys() []string {
	var keys []string
	for k := range kindKeys() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// steps reads a list of steps (steps:, finally:, a group's or a repeat's).
func (d *decoder) steps(n *yaml.Node, what string) []*Step {
	if n.Kind != yaml.SequenceNode {
		d.add(d.pos(n), "%s must be a list of steps, found %s", what, kindName(n))
		return nil
	}
	var out []*Step
	for _, c := range n.Content {
		if s := d.step(resolve(c)); s != nil {
			out = append(out, s)
		}
	}
	return out
}

// step reads one step: its kind from the keys, then every key, then what
// the kind checks of them together; nil when it has no kind.
func (d *decoder) step(n *yaml.Node) *Step {
	if n.Kind != yaml.MappingNode {
		d.add(d.pos(n), "a step must be a mapping such as {send: \"help\"} or {delay: 100ms}, found %s", kindName(n))
		return nil
	}
	ps := d.pairs(n)
	kind, kindKey, ok := d.stepKind(ps)
	if !ok {
		return nil
	}
	if kind == "" {
		var keys []string
		for _, p := range ps {
			if !slices.Contains(commonKeys, p.key.Value) {
				keys = append(keys, p.key.Value)
			}
		}
		if len(keys) > 0 {
			d.add(d.pos(n), "%s", unknownKindMsg(keys[0]))
		} else {
			d.add(d.pos(n), "the step says nothing to do: expected one of %s", kindList())
		}
		return nil
	}
	s := &Step{Kind: kind, Pos: d.pos(n)}
	d.regex = false
	for _, p := range ps {
		if p.key.Value == "regex" {
			d.regex, _ = d.boolean(p.val, "regex")
		}
	}
	allowed := append(slices.Clone(commonKeys), kindAllowed()[kind]...)
	for _, p := range ps {
		if !slices.Contains(allowed, p.key.Value) {
			if _, other := kindKeys()[p.key.Value]; other {
				d.add(d.pos(p.key), "a step does one thing, but this one has both %s and %s: split it into two steps", kindKey, p.key.Value)
			} else {
				d.unknownKey(p.key, "a "+string(kind)+" step", allowed)
			}
			continue
		}
		d.stepField(s, p)
	}
	d.finishStep(s, ps)
	return s
}

// stepKind finds the kind of a step from its keys, and the key that makes
// it; "" when no key makes a kind, and false (with the error added) when
// two do.
func (d *decoder) stepKind(ps []pair) (kind Kind, kindKey string, ok bool) {
	for _, p := range ps {
		k, known := kindKeys()[p.key.Value]
		if !known {
			continue
		}
		if k == KindCapture && isCameraCapture(p.val, ps) {
			k = KindCamera
		}
		// A camera capture may carry its image check: capture and
		// expect_image together are one step.
		if k == KindCamera && kind == KindCamera {
			continue
		}
		// expect is also a key of other kinds (see canExpect): their
		// kind key wins over it.
		if k == KindExpect && kind != "" && canExpect(kind) {
			continue
		}
		if kind == KindExpect && canExpect(k) {
			kind, kindKey = k, p.key.Value
			continue
		}
		if kind != "" {
			d.add(d.pos(p.key), "a step does one thing, but this one has both %s and %s: split it into two steps", kindKey, p.key.Value)
			return "", "", false
		}
		kind, kindKey = k, p.key.Value
	}
	return kind, kindKey, true
}

// kindList lists the kinds as steps are written, for messages.
func kindList() string {
	var names []string
	for _, k := range StepKinds() {
		if k == KindCamera {
			// written as capture: true or expect_image
			names = append(names, "expect_image")
			continue
		}
		names = append(names, string(k))
	}
	return strings.Join(names, ", ")
}

// stepField decodes one key of step s: its kind's own, else one that
// every kind that allows it reads the same way (commonFields).
func (d *decoder) stepField(s *Step, p pair) {
	k, v := p.key.Value, p.val
	if spec, ok := LookupKind(s.Kind); ok && spec.decode != nil && spec.decode(d, s, k, v) {
		return
	}
	if fn, ok := commonFields[k]; ok {
		fn(d, s, v)
	}
}

// commonFields decode the keys that several kinds accept, one function
// per key; a kind's Allowed says which of them it takes.
var commonFields = map[string]func(d *decoder, s *Step, v *yaml.Node){
	"name":         func(d *decoder, s *Step, v *yaml.Node) { s.Name, _ = d.text(v, "name") },
	"id":           (*decoder).stepID,
	"to":           func(d *decoder, s *Step, v *yaml.Node) { s.To, _ = d.str(v, "to") },
	"probe":        func(d *decoder, s *Step, v *yaml.Node) { s.To, _ = d.text(v, "probe") },
	"timeout":      func(d *decoder, s *Step, v *yaml.Node) { s.Timeout, _ = d.durationIn(v, "timeout", timeoutRange) },
	"fail_on":      func(d *decoder, s *Step, v *yaml.Node) { s.FailOn = d.patternList(v, "fail_on", false) },
	"settle":       func(d *decoder, s *Step, v *yaml.Node) { s.Settle = d.settle(v) },
	"until_prompt": func(d *decoder, s *Step, v *yaml.Node) { s.UntilPrompt = d.optBool(v, "until_prompt") },
	"expect":       func(d *decoder, s *Step, v *yaml.Node) { s.Expect = d.expectPatterns(v) },
	"regex":        func(*decoder, *Step, *yaml.Node) {}, // read before the other keys, in step
	"save":         func(d *decoder, s *Step, v *yaml.Node) { s.Save = d.saves(v) },
}

// stepID reads id:, the name expressions read the step's result by; it
// must be unique in the file.
func (d *decoder) stepID(s *Step, v *yaml.Node) {
	id, ok := d.str(v, "id")
	if ok && !validName(id) {
		d.add(d.pos(v), "id %q must be a name of letters, digits and underscores", id)
	} else if prev, dup := d.ids[id]; ok && dup {
		d.add(d.pos(v), "id %q is already used by the step at line %d", id, prev.Line)
	} else if ok {
		d.ids[id] = d.pos(v)
		s.ID = id
	}
}

// optBool reads a boolean that may be left out: nil when it is not
// true or false.
func (d *decoder) optBool(v *yaml.Node, what string) *bool {
	if b, ok := d.boolean(v, what); ok {
		return &b
	}
	return nil
}

// finishSteps checks the steps: list of a group or a repeat.
func (d *decoder) finishSteps(s *Step, keys stepKeys) {
	if !keys.has["steps"] {
		d.add(s.Pos, "a %s needs a steps: list", s.Kind)
	} else if len(s.Steps) == 0 && len(d.list) == 0 {
		d.add(s.Pos, "a %s with no steps does nothing: add steps", s.Kind)
	}
}

// stepKeys are the entries a step was written with, for its kind's
// finish.
type stepKeys struct {
	pairs []pair
	has   map[string]bool
}

// finishStep applies what depends on several keys and checks required ones.
func (d *decoder) finishStep(s *Step, ps []pair) {
	has := map[string]bool{}
	for _, p := range ps {
		has[p.key.Value] = true
	}
	if k, ok := LookupKind(s.Kind); ok && k.finish != nil {
		k.finish(d, s, stepKeys{pairs: ps, has: has})
	}
}

// canExpect reports whether steps of kind k take an expect key besides
// the key that makes them.
func canExpect(k Kind) bool {
	spec, ok := LookupKind(k)
	return ok && slices.Contains(spec.Allowed, "expect")
}

// TalksToDevice reports whether a step, as a mapping decoded from YAML or
// JSON, talks to a serial device (and so takes to:): send, expect, a
// serial capture, lines, break and reset_sequence do; memory, debugger,
// camera, exec, power, build and upload steps do not. Tools that fill in to: for steps use it.
func TalksToDevice(m map[string]any) bool {
	if v, ok := m["capture"]; ok && rawCameraCapture(v, m) {
		return false
	}
	device := false
	for key := range m {
		k, ok := kindKeys()[key]
		if !ok {
			continue
		}
		// expect also belongs to steps of other kinds, which win.
		if spec, _ := LookupKind(k); spec.On != OnDevice {
			return false
		}
		device = true
	}
	return device
}

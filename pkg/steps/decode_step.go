package steps

import (
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

func allStepKeys() []string {
	var keys []string
	for k := range kindKeys() {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

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

func (d *decoder) step(n *yaml.Node) *Step {
	if n.Kind != yaml.MappingNode {
		d.add(d.pos(n), "a step must be a mapping such as {send: \"help\"} or {delay: 100ms}, found %s", kindName(n))
		return nil
	}
	ps := d.pairs(n)
	kind, kindKey := Kind(""), ""
	var kindPair pair
	for _, p := range ps {
		k, ok := kindKeys()[p.key.Value]
		if !ok {
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
		// expect is also a key of send, mem_read, mem_poll and openocd
		// steps: another kind key wins over it.
		if k == KindExpect && kind != "" && canExpect(kind) {
			continue
		}
		if kind == KindExpect && canExpect(k) {
			kind, kindKey, kindPair = k, p.key.Value, p
			continue
		}
		if kind != "" {
			d.add(d.pos(p.key), "a step does one thing, but this one has both %s and %s: split it into two steps", kindKey, p.key.Value)
			return nil
		}
		kind, kindKey, kindPair = k, p.key.Value, p
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
		d.stepField(s, p, kindPair)
	}
	d.finishStep(s, n, ps)
	return s
}

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

func (d *decoder) stepField(s *Step, p pair, kindPair pair) {
	k, v := p.key.Value, p.val
	if spec, ok := LookupKind(s.Kind); ok && spec.decode != nil && spec.decode(d, s, k, v) {
		return
	}
	switch k {
	case "name":
		s.Name, _ = d.text(v, "name")
	case "id":
		id, ok := d.str(v, "id")
		if ok && !validName(id) {
			d.add(d.pos(v), "id %q must be a name of letters, digits and underscores", id)
		} else if prev, dup := d.ids[id]; ok && dup {
			d.add(d.pos(v), "id %q is already used by the step at line %d", id, prev.Line)
		} else if ok {
			d.ids[id] = d.pos(v)
			s.ID = id
		}
	case "to":
		s.To, _ = d.str(v, "to")
	case "probe":
		s.To, _ = d.text(v, "probe")
	case "timeout":
		s.Timeout, _ = d.durationIn(v, "timeout", timeoutRange)
	case "read_timeout":
		s.Timeout, _ = d.numberIn(v, "read_timeout (seconds)", time.Second, timeoutRange)
	case "fail_on":
		s.FailOn = d.patternList(v, "fail_on", false)
	case "settle":
		s.Settle = d.settle(v)
	case "send":
		s.Text, _ = d.template(v, "send")
	case "send_hex":
		str, ok := d.text(v, "send_hex")
		if !ok {
			return
		}
		clean := strings.NewReplacer(" ", "", ":", "", "-", "", "0x", "", "\n", "").Replace(str)
		b, err := hex.DecodeString(clean)
		if err != nil || len(b) == 0 {
			d.add(d.pos(v), "send_hex %q is not hex bytes: expected pairs of hex digits like \"0d 0a ff\"", str)
			return
		}
		s.Bytes = b
	case "send_ctrl":
		str, ok := d.text(v, "send_ctrl")
		if !ok {
			return
		}
		b, err := ctrlByte(str)
		if err != nil {
			d.add(d.pos(v), "send_ctrl: %v", err)
			return
		}
		s.Bytes, s.Ctrl = []byte{b}, true
	case "line_ending":
		s.LineEnding = d.lineEnding(v)
	case "wait_prompt":
		if b, ok := d.boolean(v, "wait_prompt"); ok {
			s.WaitPrompt = &b
		}
	case "until_prompt":
		if b, ok := d.boolean(v, "until_prompt"); ok {
			s.UntilPrompt = &b
		}
	case "expect":
		s.Expect = d.expectPatterns(v)
	case "regex":
		// read before the other keys, in step
	case "save":
		s.Save = d.saves(v)
	case "group":
		s.Name, _ = d.text(v, "group name")
	case "repeat":
		d.repeat(s, v)
	case "steps":
		s.Steps = d.steps(v, "steps")
	}
}

// stepKeys are the entries a step was written with, for its kind's
// finish.
type stepKeys struct {
	pairs []pair
	has   map[string]bool
}

// finishStep applies what depends on several keys and checks required ones.
func (d *decoder) finishStep(s *Step, n *yaml.Node, ps []pair) {
	has := map[string]bool{}
	for _, p := range ps {
		has[p.key.Value] = true
	}
	if k, ok := LookupKind(s.Kind); ok && k.finish != nil {
		k.finish(d, s, stepKeys{pairs: ps, has: has})
		return
	}
	switch s.Kind {
	case KindSend:
		n := 0
		for _, k := range []string{"send", "send_hex", "send_ctrl"} {
			if has[k] {
				n++
			}
		}
		if n > 1 {
			d.add(s.Pos, "a send step has one of send, send_hex or send_ctrl")
		}
		if has["send_ctrl"] && has["wait_prompt"] {
			d.add(s.Pos, "wait_prompt goes with send and send_hex: send_ctrl never waits for the prompt")
		}
		if has["until_prompt"] && !has["expect"] {
			d.add(s.Pos, "until_prompt needs an expect on the same step")
		}
		if len(s.Save) > 0 && !has["expect"] {
			d.add(s.Pos, "save needs an expect on the same step")
		}
	case KindExpect:
		if len(s.Save) > 0 && len(s.Expect) == 0 {
			d.add(s.Pos, "save needs an expect")
		}
	case KindGroup, KindRepeat:
		if !has["steps"] {
			d.add(s.Pos, "a %s needs a steps: list", s.Kind)
		} else if len(s.Steps) == 0 && len(d.list) == 0 {
			d.add(s.Pos, "a %s with no steps does nothing: add steps", s.Kind)
		}
	}
}

func ctrlByte(s string) (byte, error) {
	t := strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "ctrl-"), "^")
	if len(t) == 1 {
		c := t[0]
		switch {
		case c >= 'a' && c <= 'z':
			return c - 'a' + 1, nil
		case c == '@':
			return 0, nil
		case c == '[':
			return 0x1b, nil
		case c == '\\':
			return 0x1c, nil
		case c == ']':
			return 0x1d, nil
		case c == '^':
			return 0x1e, nil
		case c == '_':
			return 0x1f, nil
		}
	}
	return 0, fmt.Errorf("%q is not a control key: expected a letter such as c (Ctrl-C) or one of @ [ \\ ] ^ _", s)
}

func (d *decoder) expectPatterns(v *yaml.Node) []*PatternSpec {
	return d.expectList(v, d.regex)
}

func (d *decoder) expectList(v *yaml.Node, regex bool) []*PatternSpec {
	if v.Kind == yaml.MappingNode {
		ps := d.pairs(v)
		if len(ps) == 1 && ps[0].key.Value == "any" {
			if ps[0].val.Kind != yaml.SequenceNode {
				d.add(d.pos(ps[0].val), "any must be a list of patterns, found %s", kindName(ps[0].val))
				return nil
			}
			return d.patternList(ps[0].val, "expect", regex)
		}
		if len(ps) == 1 && (ps[0].key.Value == "regex" || ps[0].key.Value == "text") {
			return d.patternList(v, "expect", regex)
		}
		d.add(d.pos(v), "expect is a pattern, a list of alternatives, or {any: [...]}")
		return nil
	}
	return d.patternList(v, "expect", regex)
}

func (d *decoder) saves(v *yaml.Node) []SaveSpec {
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag != "!!str" {
			d.add(d.pos(v), "save must be a variable name, a list of names (one per group), or {name: group}, found %s", kindName(v))
			return nil
		}
		name := v.Value
		if !validName(name) {
			d.add(d.pos(v), "save: %q is not a variable name", name)
			return nil
		}
		return []SaveSpec{{Var: name, Group: -1, Pos: d.pos(v)}}
	case yaml.SequenceNode:
		var out []SaveSpec
		for i, c := range v.Content {
			c = resolve(c)
			name, ok := d.str(c, "save")
			if !ok {
				continue
			}
			if !validName(name) {
				d.add(d.pos(c), "save: %q is not a variable name", name)
				continue
			}
			out = append(out, SaveSpec{Var: name, Group: i + 1, Pos: d.pos(c)})
		}
		return out
	case yaml.MappingNode:
		var out []SaveSpec
		for _, p := range d.pairs(v) {
			if !validName(p.key.Value) {
				d.add(d.pos(p.key), "save: %q is not a variable name", p.key.Value)
				continue
			}
			sp := SaveSpec{Var: p.key.Value, Pos: d.pos(p.key)}
			if p.val.Kind == yaml.ScalarNode && p.val.Tag == "!!int" {
				sp.Group, _ = d.integer(p.val, "save group", 0, 99)
			} else if name, ok := d.str(p.val, "save group"); ok {
				sp.GroupName = name
			}
			out = append(out, sp)
		}
		return out
	}
	d.add(d.pos(v), "save must be a variable name, a list of names (one per group), or {name: group}, found %s", kindName(v))
	return nil
}

var repeatKeys = []string{"count", "every", "for", "as"}

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

// canExpect reports whether steps of kind k take an expect key.
func canExpect(k Kind) bool {
	return k == KindSend || k == KindMemRead || k == KindMemPoll || k == KindOpenOCD || k == KindMonitor || k == KindExec
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

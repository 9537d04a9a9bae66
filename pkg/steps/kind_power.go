package steps

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// KindPower switches a board's power with the commands of its power entry
// (the sequence's or the bench file's power: section): power: cycle, or
// power: {device: dut, action: off}. See Step.Power.
const KindPower Kind = "power"

func init() {
	registerKind(KindSpec{
		Kind:    KindPower,
		Keys:    []string{"power"},
		Caps:    CapPower,
		Doc:     "switch a board's power",
		Allowed: []string{"device", "timeout"},
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			if s.Power == nil {
				s.Power = &PowerSpec{}
			}
			switch key {
			case "power":
				d.powerStep(s.Power, v)
			case "device":
				s.Power.Target, _ = d.str(v, "device")
			default:
				return false
			}
			return true
		},
		title: func(s *Step) string {
			if s.Power != nil {
				return strings.TrimSpace(s.Power.Action + " " + s.Power.Target)
			}
			return string(KindPower)
		},
	})
}

// PowerSpec is a power step: Action (on, off or cycle) on Target, a name
// with a power entry in the sequence or the bench file.
type PowerSpec struct {
	Target string
	Action string
}

// PowerActions are the actions a power step takes.
var PowerActions = []string{"on", "off", "cycle"}

// powerStep reads power: an action, or {device, action}.
func (d *decoder) powerStep(p *PowerSpec, v *yaml.Node) {
	if v.Kind == yaml.ScalarNode {
		p.Action = d.oneOf(v, "power", PowerActions...)
		return
	}
	if v.Kind != yaml.MappingNode {
		d.add(d.pos(v), "power must be an action (on, off, cycle) or a mapping such as {device: dut, action: cycle}, found %s", kindName(v))
		return
	}
	sawAction := false
	for _, e := range d.pairs(v) {
		switch e.key.Value {
		case "device":
			p.Target, _ = d.str(e.val, "device")
		case "action":
			sawAction = true
			p.Action = d.oneOf(e.val, "action", PowerActions...)
		default:
			d.unknownKey(e.key, "power", []string{"device", "action"})
		}
	}
	if !sawAction {
		d.add(d.pos(v), "power needs an action: on, off or cycle")
	}
}

// PowerTarget is the board a power step switches in a bound sequence: the
// one it names, else the only power entry, else the only device, else
// DefaultDevice when there are neither; "" when there are several boards
// and the step names none.
func PowerTarget(seq *Sequence, p *PowerSpec) string {
	switch {
	case p.Target != "":
		return p.Target
	case len(seq.Power) == 1:
		for name := range seq.Power {
			return name
		}
	case len(seq.Devices) == 1:
		return seq.Devices[0].Name
	case len(seq.Power) == 0 && len(seq.Devices) == 0:
		return DefaultDevice
	}
	return ""
}

// CheckPower reports a power step without a board (PowerTarget), or whose
// board has no power entry, or no command for the step's action. The
// commands for a board come from the bench file (or the sequence), so this
// is only known after Bind. It changes nothing: the runner finds each
// step's board with PowerTarget.
func CheckPower(seq *Sequence) error {
	var list ErrorList
	add := func(s *Step, format string, args ...any) {
		list = append(list, &Error{Pos: s.Pos, Msg: fmt.Sprintf(format, args...)})
	}
	Walk(seq, func(s *Step) {
		if s.Kind != KindPower || s.Power == nil {
			return
		}
		p := s.Power
		target := PowerTarget(seq, p)
		if target == "" {
			add(s, "this power step needs device: because there are several boards (%s)", strings.Join(powerNames(seq), ", "))
			return
		}
		e, ok := seq.Power[target]
		switch {
		case !ok:
			add(s, "power: no power entry for %q: add one to the bench file, such as power: {%s: {on: [uhubctl, -a, on, -p, \"2\"], off: [uhubctl, -a, off, -p, \"2\"]}}", target, target)
		case p.Action != "cycle" && e.PowerCommand(p.Action) == nil:
			add(s, "power %s %s: the power entry for %s (%s) has no %s: command", p.Action, target, target, e.Pos, p.Action)
		}
	})
	if len(list) > 0 {
		return list
	}
	return nil
}

// powerNames are the boards a power step may name: the devices and the
// power entries.
func powerNames(seq *Sequence) []string {
	names := deviceNames(seq)
	for n := range seq.Power {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	sort.Strings(names)
	return names
}

package steps

import (
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// KindLines sets a console's DTR and RTS: lines: {dtr: false, rts: true},
// with hold: to put them back after a while. See Step.Lines.
const KindLines Kind = "lines"

func init() {
	registerKind(KindSpec{
		Kind:    KindLines,
		On:      OnDevice,
		Keys:    []string{"lines"},
		Caps:    CapDevice | CapModemLines,
		Doc:     "set DTR and RTS",
		Allowed: []string{"to"},
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			if key != "lines" {
				return false
			}
			s.Lines = d.lines(v)
			return true
		},
		title: func(s *Step) string { return s.Lines.describe() },
	})
}

// LinesSpec sets a console's modem control lines; nil leaves a line as
// it is. With Hold the lines go back to their previous levels after it.
type LinesSpec struct {
	DTR, RTS *bool
	Hold     time.Duration
}

// linesKeys are the keys of lines: {...}.
var linesKeys = []string{"dtr", "rts", "hold"}

// lines reads lines: {dtr, rts, hold}.
func (d *decoder) lines(v *yaml.Node) *LinesSpec {
	l := &LinesSpec{}
	if v.Kind != yaml.MappingNode {
		d.add(d.pos(v), "lines must be a mapping such as {dtr: true, rts: false}, found %s", kindName(v))
		return l
	}
	for _, p := range d.pairs(v) {
		switch p.key.Value {
		case "dtr", "rts":
			if b, ok := d.boolean(p.val, p.key.Value); ok {
				if p.key.Value == "dtr" {
					l.DTR = &b
				} else {
					l.RTS = &b
				}
			}
		case "hold":
			l.Hold, _ = d.durationIn(p.val, "hold", delayRange)
		default:
			d.unknownKey(p.key, "lines", linesKeys)
		}
	}
	if l.DTR == nil && l.RTS == nil {
		d.add(d.pos(v), "lines needs dtr:, rts: or both")
	}
	return l
}

// describe shows the levels a lines step sets: "dtr=0 rts=1 for 100ms".
func (l *LinesSpec) describe() string {
	if l == nil {
		return "lines"
	}
	var parts []string
	for _, f := range []struct {
		name string
		v    *bool
	}{{"dtr", l.DTR}, {"rts", l.RTS}} {
		if f.v != nil {
			v := "0"
			if *f.v {
				v = "1"
			}
			parts = append(parts, f.name+"="+v)
		}
	}
	if l.Hold > 0 {
		parts = append(parts, "for "+l.Hold.String())
	}
	return strings.Join(parts, " ")
}

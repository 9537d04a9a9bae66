package steps

import (
	"time"

	"gopkg.in/yaml.v3"
)

// KindBreak sends a serial break: break: 250ms, its length in
// Step.Delay.
const KindBreak Kind = "break"

// MaxBreak is the longest break a step may send: the serial driver holds
// the line in break for the whole time and cannot be interrupted.
const MaxBreak = 10 * time.Second

func init() {
	registerKind(KindSpec{
		Kind:    KindBreak,
		On:      OnDevice,
		Keys:    []string{"break"},
		Caps:    CapDevice | CapModemLines,
		Doc:     "send a serial break",
		Allowed: []string{"to"},
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			if key != "break" {
				return false
			}
			s.Delay, _ = d.duration(v, "break")
			switch {
			case d.hasErrAt(v):
			case s.Delay <= 0:
				d.add(d.pos(v), "break needs a length above 0, like 250ms")
			case s.Delay > MaxBreak:
				d.add(d.pos(v), "break of %s is longer than %s: a break cannot be interrupted once it starts", s.Delay, MaxBreak)
			}
			return true
		},
		title: func(s *Step) string { return s.Delay.String() },
	})
}

package steps

import "gopkg.in/yaml.v3"

// KindReset resets the target through its probe: reset: run, halt or init
// (true is run), in Step.ResetMode. A board reset through its console's
// lines is a reset_sequence step.
const KindReset Kind = "reset"

func init() {
	registerKind(KindSpec{
		Kind:    KindReset,
		On:      OnProbe,
		Keys:    []string{"reset"},
		Caps:    CapProbeControl,
		Doc:     "reset the target through its probe",
		Allowed: []string{"probe", "timeout"},
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			if key != "reset" {
				return false
			}
			if v.Kind == yaml.ScalarNode && v.Tag == "!!bool" {
				if b, _ := d.boolean(v, key); !b {
					d.add(d.pos(v), "reset: write reset: run, halt or init (or true for run)")
				}
				s.ResetMode = "run"
				return true
			}
			s.ResetMode = d.oneOf(v, "reset", "run", "halt", "init")
			return true
		},
		title: func(s *Step) string { return "reset " + s.ResetMode },
	})
}

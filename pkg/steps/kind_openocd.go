package steps

import "gopkg.in/yaml.v3"

// KindOpenOCD sends OpenOCD a command as Tcl: openocd: "reg pc"; expect
// and save read its output. See Step.OpenOCD.
const KindOpenOCD Kind = "openocd"

func init() {
	registerKind(KindSpec{
		Kind:    KindOpenOCD,
		On:      OnProbe,
		Keys:    []string{"openocd"},
		Caps:    CapDebugRaw,
		Doc:     "a raw OpenOCD command",
		Raw:     RawTcl,
		Note:    "a typed command (md*, mw*, halt, resume, reset, ...) needs only what it does",
		Allowed: []string{"probe", "expect", "regex", "save", "timeout"},
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			if key != "openocd" {
				return false
			}
			s.OpenOCD, _ = d.template(v, "openocd")
			return true
		},
		check: func(v *validator, s *Step) {
			v.template(s.Pos, s.OpenOCD)
			v.expect(s)
		},
		title: func(s *Step) string {
			if s.OpenOCD != nil {
				return clip(s.OpenOCD.Raw)
			}
			return string(KindOpenOCD)
		},
	})
}

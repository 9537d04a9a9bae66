package steps

import "gopkg.in/yaml.v3"

// KindMonitor sends the probe a raw command in its own language (OpenOCD
// Tcl, a GDB stub's monitor command): monitor: "reset halt"; expect and
// save read its output. See Step.Monitor.
const KindMonitor Kind = "monitor"

func init() {
	registerKind(KindSpec{
		Kind:    KindMonitor,
		On:      OnProbe,
		Keys:    []string{"monitor"},
		Caps:    CapDebugRaw,
		Doc:     "a raw command in the probe's own language (OpenOCD Tcl, a GDB stub's monitor)",
		Raw:     RawAny,
		Note:    "on OpenOCD, checked as an openocd step",
		Allowed: []string{"probe", "expect", "regex", "save", "timeout"},
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			if key != "monitor" {
				return false
			}
			s.Monitor, _ = d.template(v, "monitor")
			return true
		},
		check: func(v *validator, s *Step) {
			v.template(s.Pos, s.Monitor)
			v.expect(s)
		},
		title: func(s *Step) string {
			if s.Monitor != nil {
				return clip(s.Monitor.Raw)
			}
			return string(KindMonitor)
		},
	})
}

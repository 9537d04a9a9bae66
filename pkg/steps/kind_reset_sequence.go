package steps

import "gopkg.in/yaml.v3"

// KindResetSequence plays a bootloader's pattern of DTR and RTS levels:
// reset_sequence: esp32. See Step.ResetSequence.
const KindResetSequence Kind = "reset_sequence"

// ResetSequences are the names reset_sequence accepts. Each names a fixed
// pattern of DTR and RTS levels that the serial adapter plays.
var ResetSequences = []string{"esp32", "esp32_run", "arduino"}

func init() {
	registerKind(KindSpec{
		Kind:    KindResetSequence,
		On:      OnDevice,
		Keys:    []string{"reset_sequence"},
		Caps:    CapDevice | CapModemLines,
		Doc:     "play a bootloader's DTR/RTS pattern",
		Allowed: []string{"to"},
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			if key != "reset_sequence" {
				return false
			}
			s.ResetSequence = d.oneOf(v, "reset_sequence", ResetSequences...)
			return true
		},
		title: func(s *Step) string { return s.ResetSequence },
	})
}

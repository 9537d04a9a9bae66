package steps

import (
	"time"

	"gopkg.in/yaml.v3"
)

// KindDelay waits: delay: 250ms, or delay_ms: 250 (the form of other MCP
// servers). The wait is Step.Delay.
const KindDelay Kind = "delay"

func init() {
	registerKind(KindSpec{
		Kind: KindDelay,
		Keys: []string{"delay", "delay_ms"},
		Doc:  "wait",
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			switch key {
			case "delay":
				s.Delay, _ = d.durationIn(v, "delay", delayRange)
			case "delay_ms":
				s.Delay, _ = d.numberIn(v, "delay_ms", time.Millisecond, delayRange)
			default:
				return false
			}
			return true
		},
		title: func(s *Step) string { return s.Delay.String() },
	})
}

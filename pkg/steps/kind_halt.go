package steps

import "gopkg.in/yaml.v3"

// KindHalt halts the target through its probe, and KindResume lets it run
// again: halt: true, resume: true. Both are written the same way, so they
// share this file.
const (
	KindHalt   Kind = "halt"
	KindResume Kind = "resume"
)

func init() {
	for _, k := range []KindSpec{
		{Kind: KindHalt, Doc: "halt the target"},
		{Kind: KindResume, Doc: "resume the target"},
	} {
		k.On, k.Keys, k.Caps, k.Allowed = OnProbe, []string{string(k.Kind)}, CapProbeControl, []string{"probe", "timeout"}
		k.decode = decodeTrue(k.Kind)
		registerKind(k)
	}
}

// decodeTrue reads the key of a kind written key: true, which is all such
// a step says.
func decodeTrue(kind Kind) func(d *decoder, s *Step, key string, v *yaml.Node) bool {
	return func(d *decoder, s *Step, key string, v *yaml.Node) bool {
		if key != string(kind) {
			return false
		}
		if b, ok := d.boolean(v, key); ok && !b {
			d.add(d.pos(v), "%s: write %s: true", key, key)
		}
		return true
	}
}

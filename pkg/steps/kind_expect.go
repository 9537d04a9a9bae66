package steps

// KindExpect waits for a pattern on a console: expect: "ready>", a list
// of alternatives, or {any: [...]}. Its keys are those that send, exec
// and the probe kinds share for their own expect (see commonFields).
const KindExpect Kind = "expect"

func init() {
	registerKind(KindSpec{
		Kind:    KindExpect,
		On:      OnDevice,
		Keys:    []string{"expect"},
		Caps:    CapDevice,
		Doc:     "wait for a pattern on a console",
		Allowed: []string{"to", "regex", "save", "timeout", "fail_on", "settle", "until_prompt"},
		finish: func(d *decoder, s *Step, _ stepKeys) {
			if len(s.Save) > 0 && len(s.Expect) == 0 {
				d.add(s.Pos, "save needs an expect")
			}
		},
		check: func(v *validator, s *Step) { v.expect(s) },
		title: func(s *Step) string {
			if len(s.Expect) > 0 {
				return clip(s.Expect[0].String())
			}
			return string(KindExpect)
		},
	})
}

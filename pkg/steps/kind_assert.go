package steps

import "gopkg.in/yaml.v3"

// KindAssert checks an expression: assert: "num(major) >= 1", with a
// message: (text with ${name}, or {expr: "..."}) that a failed assert says
// instead of the expression. See Step.Assert, Step.MessageText and
// Step.MessageExpr.
const KindAssert Kind = "assert"

func init() {
	registerKind(KindSpec{
		Kind:    KindAssert,
		Keys:    []string{"assert"},
		Allowed: []string{"message"},
		Doc:     "check an expression",
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			switch key {
			case "assert":
				src, ok := d.text(v, "assert")
				if ok {
					s.Assert = &Expr{Src: src, Pos: d.pos(v)}
				}
			case "message":
				d.assertMessage(s, v)
			default:
				return false
			}
			return true
		},
		check: func(v *validator, s *Step) {
			if s.Assert != nil {
				v.compile(s.Assert)
			}
			if s.MessageText != nil {
				v.template(s.Pos, s.MessageText)
			}
			if s.MessageExpr != nil {
				v.compile(s.MessageExpr)
			}
		},
		title: func(s *Step) string {
			if s.Assert != nil {
				return clip(s.Assert.Src)
			}
			return string(KindAssert)
		},
	})
}

// assertMessage reads message: text with ${name}, or {expr: "..."}.
func (d *decoder) assertMessage(s *Step, v *yaml.Node) {
	if v.Kind == yaml.MappingNode {
		ps := d.pairs(v)
		if len(ps) != 1 || ps[0].key.Value != "expr" {
			d.add(d.pos(v), "message is text with ${name}, or {expr: \"...\"}")
			return
		}
		if src, ok := d.text(ps[0].val, "expr"); ok {
			s.MessageExpr = &Expr{Src: src, Pos: d.pos(ps[0].val)}
		}
		return
	}
	s.MessageText, _ = d.template(v, "message")
}

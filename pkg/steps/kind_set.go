package steps

import "gopkg.in/yaml.v3"

// KindSet sets variables: set: {n: 0, greeting: "hi ${name}", next:
// {expr: "n + 1"}}, in order. See Step.Set.
const KindSet Kind = "set"

func init() {
	registerKind(KindSpec{
		Kind: KindSet,
		Keys: []string{"set"},
		Doc:  "set variables",
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			if key != "set" {
				return false
			}
			s.Set = d.assignments(v)
			return true
		},
		check: func(v *validator, s *Step) {
			for _, a := range s.Set {
				if a.Text != nil {
					v.template(a.Pos, a.Text)
				}
				if a.Expr != nil {
					v.compile(a.Expr)
				}
				v.define(a.Name)
			}
		},
		title: func(s *Step) string {
			names := ""
			for i, a := range s.Set {
				if i > 0 {
					names += ", "
				}
				names += a.Name
			}
			return clip(names)
		},
	})
}

// Assignment is one variable set by a set step: a value (strings are
// templates) or an expression.
type Assignment struct {
	Name  string
	Value any
	Text  *Template
	Expr  *Expr
	Pos   Pos
}

// assignments reads set: a mapping of variable names to values.
func (d *decoder) assignments(v *yaml.Node) []*Assignment {
	if v.Kind != yaml.MappingNode {
		d.add(d.pos(v), "set must map variable names to values, found %s", kindName(v))
		return nil
	}
	var out []*Assignment
	for _, p := range d.pairs(v) {
		if !validName(p.key.Value) {
			d.add(d.pos(p.key), "set: %q is not a variable name", p.key.Value)
			continue
		}
		a := &Assignment{Name: p.key.Value, Pos: d.pos(p.key)}
		switch {
		case p.val.Kind == yaml.MappingNode:
			ps := d.pairs(p.val)
			if len(ps) != 1 || ps[0].key.Value != "expr" {
				d.add(d.pos(p.val), "set %s: a value is text, a number, a boolean or {expr: \"...\"}", a.Name)
				continue
			}
			src, ok := d.text(ps[0].val, "expr")
			if !ok {
				continue
			}
			a.Expr = &Expr{Src: src, Pos: d.pos(ps[0].val)}
		case p.val.Kind == yaml.ScalarNode && (p.val.Tag == "!!str" || p.val.Style != 0):
			t, ok := d.template(p.val, "set "+a.Name)
			if !ok {
				continue
			}
			a.Text = t
		default:
			val, ok := d.scalarValue(p.val, "set "+a.Name)
			if !ok {
				continue
			}
			a.Value = val
		}
		out = append(out, a)
	}
	return out
}

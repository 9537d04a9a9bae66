package steps

import (
	"regexp"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/stream"
)

// This file holds how steps write what they match and save: patterns
// and lists of them, expect's forms and save's.

// patternList reads fail_on and until lists: a string, or a list whose items
// are strings or {regex: "..."}.
func (d *decoder) patternList(n *yaml.Node, what string, regex bool) []*PatternSpec {
	var items []*yaml.Node
	if n.Kind == yaml.SequenceNode {
		for _, c := range n.Content {
			items = append(items, resolve(c))
		}
		if len(items) == 0 {
			d.add(d.pos(n), "%s must not be an empty list", what)
		}
	} else {
		items = []*yaml.Node{n}
	}
	var out []*PatternSpec
	for _, it := range items {
		if p := d.pattern(it, what, regex); p != nil {
			out = append(out, p)
		}
	}
	return out
}

// pattern reads one pattern: text, {regex: "RE2"} or {text: "literal"};
// a pattern without ${var} is compiled now, one with them checked for its
// shape.
func (d *decoder) pattern(n *yaml.Node, what string, regex bool) *PatternSpec {
	if n.Kind == yaml.MappingNode {
		ps := d.pairs(n)
		if len(ps) != 1 || (ps[0].key.Value != "regex" && ps[0].key.Value != "text") || ps[0].val.Kind != yaml.ScalarNode {
			d.add(d.pos(n), "a pattern in %s is text, {regex: \"RE2\"} or {text: \"literal\"}", what)
			return nil
		}
		return d.pattern(ps[0].val, what, ps[0].key.Value == "regex")
	}
	t, ok := d.template(n, what+" pattern")
	if !ok {
		return nil
	}
	if t.Raw == "" {
		d.add(d.pos(n), "%s pattern must not be empty", what)
		return nil
	}
	p := &PatternSpec{Text: *t, Regex: regex, Pos: d.pos(n)}
	if t.IsStatic() {
		var err error
		if regex {
			p.static, err = stream.Regexp(t.Raw)
		} else {
			p.static = stream.Literal(t.Raw)
		}
		if err != nil {
			d.add(d.pos(n), "%s: %v", what, err)
			return nil
		}
	} else if regex {
		// Check the shape with the references standing in as literals.
		probe, _ := t.Expand(func(string) (any, bool) { return "x", true }, nil)
		if _, err := stream.Regexp(probe); err != nil {
			d.add(d.pos(n), "%s: %v", what, err)
			return nil
		}
	}
	return p
}

// regexpQuote quotes a value put into a regular expression, so it
// matches literally.
func regexpQuote(s string) string { return regexp.QuoteMeta(s) }

// expectPatterns reads a step's expect, with the step's regex flag.
func (d *decoder) expectPatterns(v *yaml.Node) []*PatternSpec {
	return d.expectList(v, d.regex)
}

// expectList reads an expect: a pattern, a list of alternatives, or
// {any: [...]}.
func (d *decoder) expectList(v *yaml.Node, regex bool) []*PatternSpec {
	if v.Kind == yaml.MappingNode {
		ps := d.pairs(v)
		if len(ps) == 1 && ps[0].key.Value == "any" {
			if ps[0].val.Kind != yaml.SequenceNode {
				d.add(d.pos(ps[0].val), "any must be a list of patterns, found %s", kindName(ps[0].val))
				return nil
			}
			return d.patternList(ps[0].val, "expect", regex)
		}
		if len(ps) == 1 && (ps[0].key.Value == "regex" || ps[0].key.Value == "text") {
			return d.patternList(v, "expect", regex)
		}
		d.add(d.pos(v), "expect is a pattern, a list of alternatives, or {any: [...]}")
		return nil
	}
	return d.patternList(v, "expect", regex)
}

// saves reads save: a variable for the whole match, a list of names (one
// per group), or {name: group}.
func (d *decoder) saves(v *yaml.Node) []SaveSpec {
	switch v.Kind {
	case yaml.ScalarNode:
		if v.Tag != "!!str" {
			d.add(d.pos(v), "save must be a variable name, a list of names (one per group), or {name: group}, found %s", kindName(v))
			return nil
		}
		name := v.Value
		if !validName(name) {
			d.add(d.pos(v), "save: %q is not a variable name", name)
			return nil
		}
		return []SaveSpec{{Var: name, Group: -1, Pos: d.pos(v)}}
	case yaml.SequenceNode:
		var out []SaveSpec
		for i, c := range v.Content {
			c = resolve(c)
			name, ok := d.str(c, "save")
			if !ok {
				continue
			}
			if !validName(name) {
				d.add(d.pos(c), "save: %q is not a variable name", name)
				continue
			}
			out = append(out, SaveSpec{Var: name, Group: i + 1, Pos: d.pos(c)})
		}
		return out
	case yaml.MappingNode:
		var out []SaveSpec
		for _, p := range d.pairs(v) {
			if !validName(p.key.Value) {
				d.add(d.pos(p.key), "save: %q is not a variable name", p.key.Value)
				continue
			}
			sp := SaveSpec{Var: p.key.Value, Pos: d.pos(p.key)}
			if p.val.Kind == yaml.ScalarNode && p.val.Tag == "!!int" {
				sp.Group, _ = d.integer(p.val, "save group", 0, 99)
			} else if name, ok := d.str(p.val, "save group"); ok {
				sp.GroupName = name
			}
			out = append(out, sp)
		}
		return out
	}
	d.add(d.pos(v), "save must be a variable name, a list of names (one per group), or {name: group}, found %s", kindName(v))
	return nil
}

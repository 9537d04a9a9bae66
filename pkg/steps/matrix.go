package steps

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// MaxMatrixCases bounds the cases one matrix makes, include: entries
// counted.
const MaxMatrixCases = 256

// Matrix is a matrix: as written on a sequence or a group: each key with
// its values, in the order written, and the include: and exclude: lists
// as GitHub Actions has them. The loader expands it into one case per
// combination (a group named NAME[key=value,...], Step.Case), so nothing
// after loading meets a Matrix.
type Matrix struct {
	Keys    []MatrixKey
	Include [][]MatrixValue
	Exclude [][]MatrixValue
	Pos     Pos
}

// MatrixKey is one key of a matrix and its values.
type MatrixKey struct {
	Name   string
	Values []MatrixValue
	Pos    Pos
}

// MatrixValue is one key's value in a case: Value is what the variable
// holds (text, a number or a boolean), Text the value as written, which
// the case's name shows.
type MatrixValue struct {
	Key   string
	Value any
	Text  string
	Pos   Pos
}

// matrix reads a matrix: mapping.
func (d *decoder) matrix(n *yaml.Node) *Matrix {
	if n.Kind != yaml.MappingNode {
		d.add(d.pos(n), "matrix must map names to lists of values, like {baud: [9600, 115200]}, found %s", kindName(n))
		return nil
	}
	m := &Matrix{Pos: d.pos(n)}
	var include, exclude *yaml.Node
	for _, p := range d.pairs(n) {
		switch k := p.key.Value; k {
		case "include":
			include = p.val
		case "exclude":
			exclude = p.val
		default:
			if !validName(k) {
				d.add(d.pos(p.key), "matrix key %q must be letters, digits and underscores, not starting with a digit: it is a variable", k)
				continue
			}
			key := MatrixKey{Name: k, Pos: d.pos(p.key)}
			if p.val.Kind != yaml.SequenceNode || len(p.val.Content) == 0 {
				found := kindName(p.val)
				if p.val.Kind == yaml.SequenceNode {
					found = "an empty list"
				}
				d.add(d.pos(p.val), "matrix key %s must have a list of one or more values, like [9600, 115200], found %s", k, found)
				continue
			}
			for _, c := range p.val.Content {
				if v, ok := d.matrixValue(k, resolve(c)); ok {
					key.Values = append(key.Values, v)
				}
			}
			m.Keys = append(m.Keys, key)
		}
	}
	if exclude != nil {
		m.Exclude = d.matrixEntries(exclude, "exclude", m)
	}
	if include != nil {
		m.Include = d.matrixEntries(include, "include", nil)
	}
	if len(m.Keys) == 0 && len(m.Include) == 0 {
		d.add(d.pos(n), "the matrix has no keys: give at least one, like baud: [9600, 115200]")
		return nil
	}
	if cases := len(m.Cases()); cases > MaxMatrixCases {
		d.add(m.Pos, "the matrix makes more than %d cases, the limit: split it", MaxMatrixCases)
		return nil
	}
	return m
}

// matrixValue reads one value of matrix key k.
func (d *decoder) matrixValue(k string, n *yaml.Node) (MatrixValue, bool) {
	v, ok := d.scalarValue(n, "matrix value of "+k)
	if !ok {
		return MatrixValue{}, false
	}
	return MatrixValue{Key: k, Value: v, Text: n.Value, Pos: d.pos(n)}, true
}

// matrixEntries reads include: or exclude:, a list of mappings of keys to
// one value each; with of set, every key must be one of its keys.
func (d *decoder) matrixEntries(n *yaml.Node, what string, of *Matrix) [][]MatrixValue {
	if n.Kind != yaml.SequenceNode {
		d.add(d.pos(n), "matrix %s must be a list of mappings, like [{baud: 9600, fw: \"2.4.1\"}], found %s", what, kindName(n))
		return nil
	}
	var out [][]MatrixValue
	for _, c := range n.Content {
		c = resolve(c)
		if c.Kind != yaml.MappingNode || len(c.Content) == 0 {
			d.add(d.pos(c), "an entry of matrix %s must map keys to values, found %s", what, kindName(c))
			continue
		}
		var entry []MatrixValue
		for _, p := range d.pairs(c) {
			k := p.key.Value
			switch {
			case !validName(k):
				d.add(d.pos(p.key), "matrix key %q must be letters, digits and underscores, not starting with a digit: it is a variable", k)
				continue
			case of != nil && of.key(k) == nil:
				d.add(d.pos(p.key), "matrix exclude: %s is not a key of the matrix%s", k, suggest(k, of.names()))
				continue
			}
			if v, ok := d.matrixValue(k, p.val); ok {
				entry = append(entry, v)
			}
		}
		out = append(out, entry)
	}
	return out
}

func (m *Matrix) key(name string) *MatrixKey {
	for i := range m.Keys {
		if m.Keys[i].Name == name {
			return &m.Keys[i]
		}
	}
	return nil
}

func (m *Matrix) names() []string {
	var out []string
	for _, k := range m.Keys {
		out = append(out, k.Name)
	}
	return out
}

// Names are the variables the matrix's cases set: its keys, then those
// only include: entries add, each once, in the order written.
func (m *Matrix) Names() []string {
	out := m.names()
	for _, e := range m.Include {
		for _, v := range e {
			if !slices.Contains(out, v.Key) {
				out = append(out, v.Key)
			}
		}
	}
	return out
}

// Cases are the matrix's combinations, as GitHub Actions makes them:
// every combination of the keys' values (the first key's varying
// slowest), less those that match an exclude: entry in every key it
// names; then each include: entry adds its keys to every combination
// whose values it matches in the matrix's own keys (never changing one of
// those), or, when it matches none, is a case of its own.
func (m *Matrix) Cases() [][]MatrixValue {
	cases := [][]MatrixValue{nil}
	for _, k := range m.Keys {
		var next [][]MatrixValue
		for _, c := range cases {
			for _, v := range k.Values {
				next = append(next, append(slices.Clip(c), v))
				if len(next) > MaxMatrixCases {
					return next
				}
			}
		}
		cases = next
	}
	if len(m.Keys) == 0 {
		cases = nil
	}
	cases = slices.DeleteFunc(cases, func(c []MatrixValue) bool {
		return slices.ContainsFunc(m.Exclude, func(e []MatrixValue) bool { return matches(c, e) })
	})
	original := len(cases)
	for _, e := range m.Include {
		added := false
		for i := range original {
			own := slices.DeleteFunc(slices.Clone(e), func(v MatrixValue) bool { return m.key(v.Key) == nil })
			if !matches(cases[i], own) {
				continue
			}
			added = true
			for _, v := range e {
				if m.key(v.Key) == nil {
					cases[i] = setValue(cases[i], v)
				}
			}
		}
		if !added {
			cases = append(cases, slices.Clone(e))
		}
	}
	return cases
}

// matches reports whether case c has every value of entry e.
func matches(c, e []MatrixValue) bool {
	for _, v := range e {
		if !slices.ContainsFunc(c, func(have MatrixValue) bool { return have.Key == v.Key && have.Text == v.Text }) {
			return false
		}
	}
	return true
}

// setValue sets v in case c: replaces its key's value, or adds it last.
func setValue(c []MatrixValue, v MatrixValue) []MatrixValue {
	c = slices.Clone(c)
	for i := range c {
		if c[i].Key == v.Key {
			c[i] = v
			return c
		}
	}
	return append(c, v)
}

// CaseName is a matrix case's name: NAME[key=value,...], the keys in the
// order written.
func CaseName(name string, values []MatrixValue) string {
	parts := make([]string, len(values))
	for i, v := range values {
		parts[i] = v.Key + "=" + v.Text
	}
	return name + "[" + strings.Join(parts, ",") + "]"
}

// checkMatrix refuses a matrix key that is also a variable given from
// outside the file or declared under vars:, or a key of a matrix around
// it: a case's value would hide the other silently. It defines the
// matrix's variables for what follows.
func (v *validator) matrix(m *Matrix, outer []string) {
	if m == nil {
		return
	}
	for _, name := range m.Names() {
		p := m.Pos
		if k := m.key(name); k != nil {
			p = k.Pos
		}
		switch {
		case slices.ContainsFunc(v.seq.Vars, func(vr *Var) bool { return vr.Name == name }):
			vr := v.seq.Vars[slices.IndexFunc(v.seq.Vars, func(vr *Var) bool { return vr.Name == name })]
			v.add(p, "matrix key %s is also a variable under vars: (line %d): each case sets it, so rename one of them", name, vr.Pos.Line)
		case v.outside[name]:
			v.add(p, "matrix key %s is also given with --var %s: each case sets it, so leave out --var %s or rename the key", name, name, name)
		case slices.Contains(outer, name):
			v.add(p, "matrix key %s is also a key of a matrix around this one: rename one of them", name)
		}
		v.define(name)
	}
}

// expandMatrices replaces every group with a matrix by its cases, and
// the steps of a sequence with a matrix by one group per case, named
// after the sequence. A case's steps are its template's (shared: steps
// are never changed once loaded).
func expandMatrices(seq *Sequence) {
	seq.Steps = expandList(seq.Steps)
	seq.Finally = expandList(seq.Finally)
	if seq.Matrix == nil {
		return
	}
	body := seq.Steps
	seq.Steps = nil
	for _, c := range seq.Matrix.Cases() {
		seq.Steps = append(seq.Steps, &Step{Kind: KindGroup, Pos: seq.Matrix.Pos, Name: CaseName(seq.Name, c), Case: c, Steps: body})
	}
	seq.Matrix = nil
}

func expandList(ss []*Step) []*Step {
	var out []*Step
	for _, s := range ss {
		if len(s.Steps) > 0 || len(s.Finally) > 0 {
			c := *s
			c.Steps, c.Finally = expandList(s.Steps), expandList(s.Finally)
			s = &c
		}
		if s.Matrix == nil {
			out = append(out, s)
			continue
		}
		for _, vals := range s.Matrix.Cases() {
			c := *s
			c.Matrix, c.Case, c.Name = nil, vals, CaseName(s.Name, vals)
			out = append(out, &c)
		}
	}
	return out
}

// renameCases names the cases of a sequence's own matrix after its name
// once that is known (a value given without a name is named after its
// file): from was the name they were made with.
func renameCases(seq *Sequence, from string) {
	if from == seq.Name {
		return
	}
	for _, s := range seq.Steps {
		if s.Case != nil && strings.HasPrefix(s.Name, from+"[") {
			s.Name = seq.Name + strings.TrimPrefix(s.Name, from)
		}
	}
}

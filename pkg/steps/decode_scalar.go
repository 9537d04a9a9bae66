package steps

import (
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// This file holds the readers of single values that every part of a
// sequence or bench file uses (text, numbers, booleans, durations,
// templates, lists of text, paths), each with its message.

// kindName says what n is, for messages: "a mapping", "the text \"x\"".
func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "nothing (null)"
		case "!!bool":
			return "a boolean (" + n.Value + ")"
		case "!!int", "!!float":
			return "a number (" + n.Value + ")"
		default:
			return fmt.Sprintf("the text %q", n.Value)
		}
	}
	return "something else"
}

// str reads text; what names the value in messages.
func (d *decoder) str(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.add(d.pos(n), "%s must be text, found %s", what, kindName(n))
		return "", false
	}
	return n.Value, true
}

// text accepts any scalar (numbers and booleans as written).
func (d *decoder) text(n *yaml.Node, what string) (string, bool) {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.add(d.pos(n), "%s must be text, found %s", what, kindName(n))
		return "", false
	}
	return n.Value, true
}

// boolean reads true or false.
func (d *decoder) boolean(n *yaml.Node, what string) (bool, bool) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		var b bool
		if err := n.Decode(&b); err == nil {
			return b, true
		}
	}
	d.add(d.pos(n), "%s must be true or false, found %s", what, kindName(n))
	return false, false
}

// integer reads a whole number from lo to hi.
func (d *decoder) integer(n *yaml.Node, what string, lo, hi int) (int, bool) {
	if n.Kind == yaml.ScalarNode && n.Tag == "!!int" {
		var v int64
		if err := n.Decode(&v); err == nil && v >= int64(lo) && v <= int64(hi) {
			return int(v), true
		}
		d.add(d.pos(n), "%s must be a whole number from %d to %d, found %s", what, lo, hi, n.Value)
		return 0, false
	}
	d.add(d.pos(n), "%s must be a whole number, found %s", what, kindName(n))
	return 0, false
}

// number reads a finite number of 0 or more.
func (d *decoder) number(n *yaml.Node, what string) (float64, bool) {
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
		var v float64
		if err := n.Decode(&v); err == nil && !math.IsNaN(v) && !math.IsInf(v, 0) && v >= 0 {
			return v, true
		}
	}
	d.add(d.pos(n), "%s must be a number of 0 or more, found %s", what, kindName(n))
	return 0, false
}

// duration reads "250ms", "2s", "1m30s". Bare numbers are refused: a unit
// must be written.
func (d *decoder) duration(n *yaml.Node, what string) (time.Duration, bool) {
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
		d.add(d.pos(n), "%s must be a duration with a unit, like %sms or %ss, found the bare number %s", what, n.Value, n.Value, n.Value)
		return 0, false
	}
	s, ok := d.str(n, what)
	if !ok {
		return 0, false
	}
	v, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil || v < 0 {
		d.add(d.pos(n), "%s", durationError(what, s))
		return 0, false
	}
	return v, true
}

// MaxSettle bounds a settle time.
const MaxSettle = time.Minute

// settle reads a settle time: a duration from 0 to MaxSettle.
func (d *decoder) settle(n *yaml.Node) *time.Duration {
	v, ok := d.duration(n, "settle")
	if !ok {
		return nil
	}
	if v > MaxSettle {
		d.add(d.pos(n), "settle must be at most %s, found %s", MaxSettle, v)
		return nil
	}
	return &v
}

// template reads text with ${var} references.
func (d *decoder) template(n *yaml.Node, what string) (*Template, bool) {
	s, ok := d.text(n, what)
	if !ok {
		return nil, false
	}
	t, err := ParseTemplate(s)
	if err != nil {
		d.add(d.pos(n), "%s: %v", what, err)
		return nil, false
	}
	return &t, true
}

// oneOf reads one of the words allowed; "" when it is another.
func (d *decoder) oneOf(n *yaml.Node, what string, allowed ...string) string {
	s, ok := d.str(n, what)
	if !ok {
		return ""
	}
	if !slices.Contains(allowed, s) {
		d.add(d.pos(n), "%s must be one of %s, found %q%s", what, strings.Join(allowed, ", "), s, suggest(s, allowed))
		return ""
	}
	return s
}

// env reads the env: of a command: variable names to text with ${var}.
func (d *decoder) env(v *yaml.Node) map[string]*Template {
	if v.Kind != yaml.MappingNode {
		d.add(d.pos(v), "env must map variable names to values, found %s", kindName(v))
		return nil
	}
	env := map[string]*Template{}
	for _, e := range d.pairs(v) {
		if e.key.Value == "" || strings.ContainsAny(e.key.Value, "=\x00") {
			d.add(d.pos(e.key), "env: %q is not an environment variable name", e.key.Value)
			continue
		}
		if t, ok := d.template(e.val, "env "+e.key.Value); ok {
			env[e.key.Value] = t
		}
	}
	return env
}

// strings reads one text or a list of texts.
func (d *decoder) strings(n *yaml.Node, what string) []string {
	if n.Kind == yaml.ScalarNode {
		s, ok := d.text(n, what)
		if !ok {
			return nil
		}
		return []string{s}
	}
	if n.Kind != yaml.SequenceNode {
		d.add(d.pos(n), "%s must be a list of text, found %s", what, kindName(n))
		return nil
	}
	var out []string
	for _, c := range n.Content {
		if s, ok := d.text(resolve(c), what); ok {
			out = append(out, s)
		}
	}
	return out
}

// relPath makes a path written in a file relative to that file's folder,
// so sequences run from anywhere.
//
// The result is absolute: tools that open it (OpenOCD, make) may run in
// another folder than hilrun.
func (d *decoder) relPath(p string) string {
	if p == "" || filepath.IsAbs(p) || d.file == "" || strings.HasPrefix(d.file, "<") {
		return p
	}
	joined := filepath.Join(filepath.Dir(d.file), p)
	if abs, err := filepath.Abs(joined); err == nil {
		return abs
	}
	return joined
}

// parseUint reads a number as memory steps write them, with Go's
// prefixes (0x, 0o, 0b; a leading 0 alone is octal) and _ anywhere.
func parseUint(s string) (uint64, error) {
	s = strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	return strconv.ParseUint(s, 0, 64)
}

// number64 reads a number of 0 or more as parseUint does.
func (d *decoder) number64(v *yaml.Node, what string) (uint64, bool) {
	if v.Kind == yaml.ScalarNode && v.Tag != "!!null" && v.Tag != "!!bool" {
		if n, err := parseUint(v.Value); err == nil {
			return n, true
		}
	}
	d.add(d.pos(v), "%s must be a number like 0x40 or 64, found %s", what, kindName(v))
	return 0, false
}

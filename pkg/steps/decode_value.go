package steps

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"
)

// Bounds on a value given to ParseValue, as MaxFileBytes and the alias
// limits bound a file: a client that sends a sequence as JSON cannot make
// the loader build a larger tree than a file could.
const (
	// MaxValueNodes bounds the mappings, lists, keys and scalars of a
	// value: as many as MaxFileBytes of JSON text can hold ("0," is the
	// shortest item).
	MaxValueNodes = MaxFileBytes / 2
	// MaxValueDepth bounds how deep mappings and lists nest in a value,
	// as the YAML parser bounds a file.
	MaxValueDepth = 10_000
	// MaxValueBytes bounds the text of a value's keys and scalars, and of
	// each json.RawMessage in it.
	MaxValueBytes = MaxFileBytes
)

// Object is a JSON object whose members keep their order, for ParseValue:
// a map's keys are decoded sorted, an Object's in the order given, which
// is the order its problems are reported in.
type Object []Member

// Member is one key of an Object and its value.
type Member struct {
	Key   string
	Value any
}

// ParseValue decodes and validates a sequence from v, a value decoded from
// JSON: map[string]any (its keys sorted), Object, []any, json.Number,
// float64, int, int64, uint64, string, bool and nil, or json.RawMessage,
// JSON text decoded token by token with its keys in the order written. It
// reads v as Parse reads the same value written as JSON, with YAML's value
// rules: 16 is a number, "16" and "0x10" text, "250ms" a duration. Its
// errors are an ErrorList whose positions name their place in v as a JSON
// pointer (RFC 6901) under file, like "file: /steps/3/expect". Paths in v
// stay as written: a value has no folder to resolve them against.
func ParseValue(file string, v any, opts LoadOptions) (*Sequence, error) {
	t := newValueTree(file)
	root, err := t.node(v, 0, "", 0)
	if err != nil {
		return nil, err
	}
	e := &errs{file: t.inner}
	d := &decoder{errs: e, file: t.inner}
	seq := d.sequence(root)
	validate(seq, opts, e)
	if err := e.err(); err != nil {
		return nil, t.errors(err)
	}
	made := seq.Name
	t.locate(seq, named(root))
	renameCases(seq, made)
	return seq, nil
}

// named reports whether root is a mapping with a name key.
func named(root *yaml.Node) bool {
	if root.Kind != yaml.MappingNode {
		return false
	}
	for i := 0; i < len(root.Content); i += 2 {
		if root.Content[i].Value == "name" {
			return true
		}
	}
	return false
}

// valueTree builds the yaml.Node tree of a value, the tree a file's text
// parses into, for the decoder. Each node's Line is its spot in spots
// (from 1, the root); locate and errors turn those into JSON pointers once
// the decoder is done.
type valueTree struct {
	file string
	// inner names the value while it decodes: a leading "<" keeps the
	// decoder from resolving paths against a folder.
	inner string
	spots []spot
	bytes int
}

func newValueTree(file string) *valueTree {
	return &valueTree{file: file, inner: "<" + file + ">"}
}

// at gives the node at token under spot parent (0 for the root) its
// spot, within the value count limit.
func (t *valueTree) at(parent int, token string) (int, error) {
	if len(t.spots) >= MaxValueNodes {
		return 0, t.failAt(t.child(parent, token), "the sequence holds more than %d values (the value count limit): split it, or use repeat: for steps that repeat", MaxValueNodes)
	}
	t.spots = append(t.spots, spot{parent: parent, token: token})
	return len(t.spots), nil
}

// text counts n bytes of keys and scalars at spot p against the limit.
func (t *valueTree) text(p, n int) error {
	t.bytes += n
	if t.bytes > MaxValueBytes {
		return t.fail(p, "the sequence holds more than %d MiB of text (the size limit): split it, or use repeat: for steps that repeat", MaxValueBytes>>20)
	}
	return nil
}

// deep refuses a mapping or list nested past MaxValueDepth.
func (t *valueTree) deep(p, depth int) error {
	if depth > MaxValueDepth {
		return t.fail(p, "mappings and lists nest deeper than %d levels here (the depth limit)", MaxValueDepth)
	}
	return nil
}

// fail is an error at spot p.
func (t *valueTree) fail(p int, format string, args ...any) error {
	return t.failAt(t.pointer(p), format, args...)
}

func (t *valueTree) failAt(ptr, format string, args ...any) error {
	return ErrorList{{Pos: Pos{File: t.file, Pointer: ptr}, Msg: fmt.Sprintf(format, args...)}}
}

// node builds the node of v, at token under spot parent (0 and "" for the
// root), depth mappings and lists deep.
func (t *valueTree) node(v any, parent int, token string, depth int) (*yaml.Node, error) {
	if raw, ok := v.(json.RawMessage); ok {
		return t.raw(raw, parent, token, depth)
	}
	p, err := t.at(parent, token)
	if err != nil {
		return nil, err
	}
	switch x := v.(type) {
	case map[string]any:
		obj := make(Object, 0, len(x))
		for _, k := range slices.Sorted(maps.Keys(x)) {
			obj = append(obj, Member{k, x[k]})
		}
		return t.mapping(obj, p, depth)
	case Object:
		return t.mapping(x, p, depth)
	case []any:
		return t.list(x, p, depth)
	}
	n, err := t.scalar(v, p)
	if err != nil {
		return nil, err
	}
	return n, t.text(p, len(n.Value))
}

func (t *valueTree) mapping(obj Object, p, depth int) (*yaml.Node, error) {
	if err := t.deep(p, depth+1); err != nil {
		return nil, err
	}
	n := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: yaml.FlowStyle, Line: p}
	n.Content = make([]*yaml.Node, 0, 2*len(obj))
	for _, m := range obj {
		val, err := t.node(m.Value, p, m.Key, depth+1)
		if err != nil {
			return nil, err
		}
		if err := t.text(p, len(m.Key)); err != nil {
			return nil, err
		}
		// A key's place is its value's: an unknown key is reported where
		// its value is.
		n.Content = append(n.Content, strNode(m.Key, val.Line), val)
	}
	return n, nil
}

func (t *valueTree) list(items []any, p, depth int) (*yaml.Node, error) {
	if err := t.deep(p, depth+1); err != nil {
		return nil, err
	}
	n := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Line: p}
	n.Content = make([]*yaml.Node, 0, len(items))
	for i, it := range items {
		c, err := t.node(it, p, strconv.Itoa(i), depth+1)
		if err != nil {
			return nil, err
		}
		n.Content = append(n.Content, c)
	}
	return n, nil
}

// strNode is a string as JSON writes one, quoted: YAML reads it as text
// whatever it holds.
func strNode(s string, line int) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Style: yaml.DoubleQuotedStyle, Value: s, Line: line}
}

func (t *valueTree) scalar(v any, p int) (*yaml.Node, error) {
	switch x := v.(type) {
	case nil:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Value: "null", Line: p}, nil
	case bool:
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: strconv.FormatBool(x), Line: p}, nil
	case string:
		return strNode(x, p), nil
	case json.Number:
		if !jsonNumberRE.MatchString(string(x)) {
			return nil, t.fail(p, "%q is not a JSON number", string(x))
		}
		return numberNode(string(x), p), nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, t.fail(p, "%v is not a JSON number", x)
		}
		return numberNode(strconv.FormatFloat(x, 'g', -1, 64), p), nil
	case int:
		return numberNode(strconv.Itoa(x), p), nil
	case int64:
		return numberNode(strconv.FormatInt(x, 10), p), nil
	case uint64:
		return numberNode(strconv.FormatUint(x, 10), p), nil
	}
	return nil, t.fail(p, "a value of type %T is not JSON", v)
}

var jsonNumberRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][-+]?[0-9]+)?$`)

// numberNode is a JSON number with the tag YAML resolves its text to: an
// integer that fits in 64 bits is !!int, another number !!float, and one
// that overflows a float (1e999) text, as YAML reads them.
func numberNode(s string, line int) *yaml.Node {
	tag := "!!str"
	if _, err := strconv.ParseInt(s, 0, 64); err == nil {
		tag = "!!int"
	} else if _, err := strconv.ParseUint(s, 0, 64); err == nil {
		tag = "!!int"
	} else if _, err := strconv.ParseFloat(s, 64); err == nil {
		tag = "!!float"
	}
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: s, Line: line}
}

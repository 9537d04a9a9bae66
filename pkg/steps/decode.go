package steps

import (
	"bytes"
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/gate/files"
)

// LoadOptions adjusts loading.
type LoadOptions struct {
	// Vars names variables that will be defined from outside the file
	// (hilrun run --var), so references to them are not undefined.
	Vars []string
}

// Load reads and validates the sequence file at path. Its errors are an
// ErrorList with one FILE:LINE:COL entry per problem, or an *os.PathError
// when the file cannot be read.
func Load(fs files.Policy, path string, opts LoadOptions) (*Sequence, error) {
	data, err := ReadFile(fs, path)
	if err != nil {
		return nil, err
	}
	return Parse(path, data, opts)
}

// Parse decodes and validates a sequence from data. file names it in
// errors; a name ending in .json is read as JSON, anything else as YAML
// (of which JSON is a subset).
func Parse(file string, data []byte, opts LoadOptions) (*Sequence, error) {
	e := &errs{file: file}
	root, err := parseNode(file, data)
	if err != nil {
		return nil, err
	}
	d := &decoder{errs: e, file: file}
	seq := d.sequence(root)
	// Validation runs on what could be decoded, so one pass reports every
	// problem it can find.
	validate(seq, opts, e)
	if err := e.err(); err != nil {
		return nil, err
	}
	return seq, nil
}

// yamlLineRE finds the line yaml.v3 puts in its messages.
var yamlLineRE = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseNode reads data as JSON (a .json file) or YAML into its root
// node, with the file's size and its aliases bounded.
func parseNode(file string, data []byte) (*yaml.Node, error) {
	if err := checkSize(file, len(data)); err != nil {
		return nil, err
	}
	if strings.EqualFold(filepath.Ext(file), ".json") {
		if err := jsonSyntax(file, data); err != nil {
			return nil, err
		}
		data = untab(data)
	}
	var doc yaml.Node
	err := yaml.Unmarshal(data, &doc)
	if err != nil && looksLikeJSON(data) && json.Valid(data) {
		// JSON in a file not named .json: YAML reads it once tabs are gone.
		doc = yaml.Node{}
		err = yaml.Unmarshal(untab(data), &doc)
	}
	if err != nil {
		msg := err.Error()
		line, col := 1, 1
		if m := yamlLineRE.FindStringSubmatch(msg); m != nil {
			line, _ = strconv.Atoi(m[1])
			line, col, msg = yamlErrorAt(data, line, m[2])
		} else {
			msg = strings.TrimPrefix(msg, "yaml: ")
		}
		return nil, ErrorList{{Pos: Pos{File: file, Line: line, Col: col}, Msg: "invalid YAML: " + msg}}
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, ErrorList{{Pos: Pos{File: file, Line: 1, Col: 1}, Msg: "the file is empty: expected a sequence with steps, or a list of steps"}}
	}
	if err := CheckAliases(file, doc.Content[0]); err != nil {
		return nil, err
	}
	return doc.Content[0], nil
}

// untab turns the tabs of valid JSON, which can only be white space between
// tokens, into spaces, which YAML always accepts there.
func untab(data []byte) []byte {
	return bytes.ReplaceAll(data, []byte("\t"), []byte(" "))
}

// looksLikeJSON reports whether data starts as a JSON object or array.
func looksLikeJSON(data []byte) bool {
	t := bytes.TrimLeft(data, " \t\r\n")
	return len(t) > 0 && (t[0] == '{' || t[0] == '[')
}

// jsonSyntax reports a JSON syntax error at its line and column.
func jsonSyntax(file string, data []byte) error {
	// Valid allocates nothing; only a document with an error is decoded,
	// for the error's offset.
	if json.Valid(data) {
		return nil
	}
	var v any
	err := json.Unmarshal(data, &v)
	if err == nil {
		return nil
	}
	var se *json.SyntaxError
	off := int64(len(data))
	if errors.As(err, &se) {
		off = se.Offset
	}
	line, col := 1, 1
	for i := int64(0); i < off-1 && i < int64(len(data)); i++ {
		if data[i] == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	msg := err.Error()
	return ErrorList{{Pos: Pos{File: file, Line: line, Col: col}, Msg: "invalid JSON: " + msg}}
}

// decoder reads the nodes of one file into a sequence (or a bench or a
// pool), collecting every problem with its position.
type decoder struct {
	*errs
	file  string
	seq   *Sequence
	ids   map[string]Pos
	regex bool // the regex flag of the step being decoded
}

// pos is where n is in the file.
func (d *decoder) pos(n *yaml.Node) Pos { return Pos{File: d.file, Line: n.Line, Col: n.Column} }

// hasErrAt reports whether an error was already recorded at n.
func (d *decoder) hasErrAt(n *yaml.Node) bool {
	p := d.pos(n)
	for _, e := range d.list {
		if e.Pos == p {
			return true
		}
	}
	return false
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

// pair is one entry of a mapping.
type pair struct{ key, val *yaml.Node }

// pairs returns a mapping's entries, reporting duplicate and non-string keys.
func (d *decoder) pairs(n *yaml.Node) []pair {
	var out []pair
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := resolve(n.Content[i]), resolve(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			d.add(d.pos(k), "a key must be a plain name")
			continue
		}
		if k.Tag == "!!merge" {
			d.add(d.pos(k), "YAML merge keys (<<) are not supported")
			continue
		}
		if seen[k.Value] {
			d.add(d.pos(k), "duplicate key %q", k.Value)
			continue
		}
		seen[k.Value] = true
		out = append(out, pair{k, v})
	}
	return out
}

// unknownKey reports key k, which where does not take, with the nearest
// of the keys allowed.
func (d *decoder) unknownKey(k *yaml.Node, where string, allowed []string) {
	d.add(d.pos(k), "unknown key %q in %s%s", k.Value, where, suggest(k.Value, allowed))
}

// topKeys are the keys of a sequence file's top level.
var topKeys = []string{"name", "description", "devices", "probes", "cameras", "power", "vars", "secrets", "on_failure", "timeout", "expect_timeout", "fail_on", "steps", "finally", "tags", "matrix", "retries", "before_retry", "$schema"}

// sequence reads a whole sequence file: a mapping with steps, or a bare
// list of steps.
func (d *decoder) sequence(root *yaml.Node) *Sequence {
	root = resolve(root)
	seq := &Sequence{File: d.file, OnFailure: Stop, ExpectTimeout: DefaultExpectTimeout, Pos: d.pos(root)}
	d.seq = seq
	d.ids = map[string]Pos{}
	switch root.Kind {
	case yaml.SequenceNode:
		seq.Steps = d.steps(root, "steps")
		seq.Name = defaultName(d.file)
		return seq
	case yaml.MappingNode:
	default:
		d.add(d.pos(root), "a sequence file must be a mapping with steps, or a list of steps; found %s", kindName(root))
		return seq
	}
	var stepsNode *yaml.Node
	for _, p := range d.pairs(root) {
		switch p.key.Value {
		case "name":
			seq.Name, _ = d.text(p.val, "name")
		case "description":
			seq.Description, _ = d.text(p.val, "description")
		case "devices":
			d.devices(p.val)
		case "probes":
			d.probes(p.val, false)
		case "cameras":
			d.cameras(p.val)
		case "power":
			d.power(p.val)
		case "vars":
			d.vars(p.val)
		case "secrets":
			d.secretNames(p.val)
		case "on_failure":
			seq.OnFailure = d.onFailure(p.val)
		case "timeout":
			seq.Timeout, _ = d.durationIn(p.val, "timeout", runRange)
		case "expect_timeout":
			if v, ok := d.durationIn(p.val, "expect_timeout", timeoutRange); ok && v > 0 {
				seq.ExpectTimeout = v
			}
		case "fail_on":
			seq.FailOn = d.patternList(p.val, "fail_on", false)
		case "steps":
			stepsNode = p.val
			seq.Steps = d.steps(p.val, "steps")
		case "finally":
			seq.Finally = d.steps(p.val, "finally")
		case "tags":
			seq.Tags = d.tags(p.val)
		case "matrix":
			seq.Matrix = d.matrix(p.val)
		case "$schema":
		case "retries", "before_retry":
			d.retryKey(&seq.Retry, p.key.Value, p.val)
		default:
			d.unknownKey(p.key, "the sequence", topKeys)
		}
	}
	if stepsNode == nil {
		d.add(d.pos(root), "the sequence has no steps: add a steps: list")
	}
	if seq.Name == "" {
		seq.Name = defaultName(d.file)
	}
	return seq
}

// defaultName names a sequence after its file, without the extension.
func defaultName(file string) string {
	base := filepath.Base(file)
	return strings.TrimSuffix(base, filepath.Ext(base))
}

// onFailure reads on_failure: stop or continue.
func (d *decoder) onFailure(n *yaml.Node) OnFailure {
	s, ok := d.str(n, "on_failure")
	if !ok {
		return Stop
	}
	switch OnFailure(s) {
	case Stop, Continue:
		return OnFailure(s)
	}
	d.add(d.pos(n), "on_failure must be stop or continue, found %q", s)
	return Stop
}

// namedEntries reads a section that maps names to entries (devices,
// probes, cameras, power): section must be a mapping (of what, for the
// message), each name a valid name (an item name), and fn reads each entry.
func (d *decoder) namedEntries(n *yaml.Node, section, what, item string, fn func(name string, p pair)) {
	if n.Kind != yaml.MappingNode {
		d.add(d.pos(n), "%s must map %s, found %s", section, what, kindName(n))
		return
	}
	for _, p := range d.pairs(n) {
		if !validName(p.key.Value) {
			d.add(d.pos(p.key), "%s %q must be a name of letters, digits and underscores", item, p.key.Value)
			continue
		}
		fn(p.key.Value, p)
	}
}

// vars reads the vars section: names to text, numbers or booleans.
func (d *decoder) vars(n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		d.add(d.pos(n), "vars must map names to values, found %s", kindName(n))
		return
	}
	for _, p := range d.pairs(n) {
		if !validName(p.key.Value) {
			d.add(d.pos(p.key), "variable name %q must be letters, digits and underscores, not starting with a digit", p.key.Value)
			continue
		}
		v, ok := d.scalarValue(p.val, "variable "+p.key.Value)
		if !ok {
			continue
		}
		d.seq.Vars = append(d.seq.Vars, &Var{Name: p.key.Value, Value: v, Pos: d.pos(p.key)})
	}
}

// scalarValue decodes a variable value: text, number or boolean.
func (d *decoder) scalarValue(n *yaml.Node, what string) (any, bool) {
	if n.Kind != yaml.ScalarNode {
		d.add(d.pos(n), "%s must be text, a number or a boolean, found %s", what, kindName(n))
		return nil, false
	}
	switch n.Tag {
	case "!!int":
		var v int64
		if err := n.Decode(&v); err == nil {
			return int(v), true
		}
		var u uint64
		if err := n.Decode(&u); err == nil {
			return u, true
		}
	case "!!float":
		var v float64
		if err := n.Decode(&v); err == nil {
			return v, true
		}
	case "!!bool":
		var v bool
		if err := n.Decode(&v); err == nil {
			return v, true
		}
	case "!!null":
		return nil, true
	}
	return n.Value, true
}

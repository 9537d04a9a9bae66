package selectx

import (
	"fmt"
	"path"
	"slices"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/steps"
)

// MaxQuarantineEntries bounds the entries of a quarantine list.
const MaxQuarantineEntries = 10000

// Quarantine is a quarantine list: sequences and groups that do not run
// for now, each with the reason, on every bench or on some.
type Quarantine struct {
	File    string
	Entries []QuarantineEntry
}

// QuarantineEntry is one entry of a quarantine list.
type QuarantineEntry struct {
	// Name is a glob (path.Match: *, ?, [...]) over sequence and group
	// names; a name equal to it always matches, so a matrix case's name
	// (boot[baud=9600]) can be written as it is.
	Name   string
	Reason string
	// Benches limits the entry to the benches named; empty means every
	// bench.
	Benches []string
	Pos     steps.Pos
}

// Matches reports whether the entry applies to name on bench.
func (e *QuarantineEntry) Matches(name, bench string) bool {
	if len(e.Benches) > 0 && !slices.Contains(e.Benches, bench) {
		return false
	}
	if e.Name == name {
		return true
	}
	ok, _ := path.Match(e.Name, name)
	return ok
}

// Lookup returns the first entry that applies to name on bench, or nil.
// A nil Quarantine has none.
func (q *Quarantine) Lookup(name, bench string) *QuarantineEntry {
	if q == nil {
		return nil
	}
	for i := range q.Entries {
		if q.Entries[i].Matches(name, bench) {
			return &q.Entries[i]
		}
	}
	return nil
}

// Why is what a report says of a case that e quarantines.
func (e *QuarantineEntry) Why() string { return "quarantined: " + e.Reason }

// LoadQuarantine reads the quarantine list at file through fs. Its
// problems are a steps.ErrorList, one FILE:LINE:COL entry each.
func LoadQuarantine(fs files.Policy, file string) (*Quarantine, error) {
	data, err := steps.ReadFile(fs, file)
	if err != nil {
		return nil, fmt.Errorf("read the quarantine list: %w", err)
	}
	return ParseQuarantine(file, data)
}

// ParseQuarantine reads a quarantine list from data: a YAML list of
// {name: GLOB, reason: TEXT, benches: [NAME, ...]}, benches optional.
func ParseQuarantine(file string, data []byte) (*Quarantine, error) {
	q := &Quarantine{File: file}
	var errs steps.ErrorList
	add := func(n *yaml.Node, format string, args ...any) {
		errs = append(errs, &steps.Error{Pos: steps.Pos{File: file, Line: n.Line, Col: n.Column}, Msg: fmt.Sprintf(format, args...)})
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, steps.ErrorList{{Pos: steps.Pos{File: file, Line: 1, Col: 1}, Msg: "invalid YAML: " + err.Error()}}
	}
	if len(doc.Content) == 0 {
		return q, nil // an empty list quarantines nothing
	}
	root := doc.Content[0]
	if err := steps.CheckAliases(file, root); err != nil {
		return nil, err
	}
	if root.Kind != yaml.SequenceNode {
		add(root, "a quarantine list must be a list of entries like {name: boot, reason: \"flaky, #123\"}")
		return nil, errs
	}
	if len(root.Content) > MaxQuarantineEntries {
		add(root, "%d entries, more than the limit of %d", len(root.Content), MaxQuarantineEntries)
		return nil, errs
	}
	for _, n := range root.Content {
		if e, ok := quarantineEntry(n, add); ok {
			e.Pos.File = file
			q.Entries = append(q.Entries, e)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return q, nil
}

// quarantineEntry reads one entry of a quarantine list.
func quarantineEntry(n *yaml.Node, add func(*yaml.Node, string, ...any)) (QuarantineEntry, bool) {
	e := QuarantineEntry{Pos: steps.Pos{Line: n.Line, Col: n.Column}}
	if n.Kind != yaml.MappingNode {
		add(n, "an entry must be a mapping like {name: boot, reason: \"flaky, #123\"}")
		return e, false
	}
	ok := true
	text := func(v *yaml.Node, what string) string {
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" || v.Value == "" {
			add(v, "%s must be text", what)
			ok = false
			return ""
		}
		return v.Value
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		switch k.Value {
		case "name":
			e.Name = text(v, "name")
			if _, err := path.Match(e.Name, ""); err != nil {
				add(v, "name %q is not a valid glob: %v (write [ as \\[ to match it)", e.Name, err)
				ok = false
			}
		case "reason":
			e.Reason = text(v, "reason")
		case "benches":
			if v.Kind != yaml.SequenceNode {
				add(v, "benches must be a list of bench names")
				ok = false
				continue
			}
			for _, b := range v.Content {
				e.Benches = append(e.Benches, text(b, "a bench name"))
			}
		default:
			add(k, "unknown key %q in a quarantine entry: want name, reason and benches", k.Value)
			ok = false
		}
	}
	if e.Name == "" && ok {
		add(n, "the entry has no name: say which sequence or group it quarantines")
		ok = false
	}
	if e.Reason == "" && ok {
		add(n, "the entry for %s has no reason: say why it is quarantined, the reports show it", e.Name)
		ok = false
	}
	return e, ok
}

// Secrets in a session: a typed line may send ${name} of a session's
// secret, and nothing the session prints, keeps or writes holds a value.
// The consoles mask what the device says (its echo included) and the
// runner redacts what a step reports; this file keeps the session's own
// text clean: its messages, the history file and :record files.

package repl

import (
	"slices"
	"strings"

	"golang.org/x/term"
	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/redact"
	"github.com/hilrun/hilrun/pkg/steps"
)

// secretsNode is the secrets: list of a typed line's sequence: the
// session's secrets, so that ${name} of one is a secret in a send and
// refused elsewhere, as in a file. nil without secrets.
func (s *Session) secretsNode() *yaml.Node {
	names := s.opts.Secrets.Names()
	if len(names) == 0 {
		return nil
	}
	list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
	for _, n := range names {
		list.Content = append(list.Content, scalar(n))
	}
	return list
}

// asReference is text with each secret's value written as ${name}: a line
// that held a value, typed as it is, keeps its meaning in the history and
// in a recording, and never the value.
func (s *Session) asReference(text string) string {
	if s.opts.Secrets.Empty() || !s.opts.Secrets.Contains(text) {
		return text
	}
	return byLength(s.opts.Secrets, text, func(name string) string { return "${" + name + "}" })
}

// byLength replaces each secret's value in text by with(name), the
// longest value first, so that a value inside another is never half
// replaced.
func byLength(set *redact.Set, text string, with func(string) string) string {
	type sec struct{ name, value string }
	var list []sec
	for _, n := range set.Names() {
		v, _ := set.Lookup(n)
		list = append(list, sec{n, v})
	}
	slices.SortStableFunc(list, func(a, b sec) int { return len(b.value) - len(a.value) })
	for _, e := range list {
		text = strings.ReplaceAll(text, e.value, with(e.name))
	}
	return text
}

// recordNode is a copy of a step's node with each secret's value in its
// text written as ${name}, and the names of the session's secrets it
// sends added to used.
func (s *Session) recordNode(n *yaml.Node, used map[string]bool) *yaml.Node {
	if s.opts.Secrets.Empty() {
		return n
	}
	c := *n
	if c.Kind == yaml.ScalarNode {
		c.Value = s.asReference(c.Value)
		if t, err := steps.ParseTemplate(c.Value); err == nil {
			for _, ref := range t.Refs() {
				if _, ok := s.opts.Secrets.Lookup(ref); ok {
					used[ref] = true
				}
			}
		}
		return &c
	}
	c.Content = make([]*yaml.Node, len(n.Content))
	for i, e := range n.Content {
		c.Content[i] = s.recordNode(e, used)
	}
	return &c
}

// usedSecrets is the secrets: list a recording declares: the names its
// steps send, sorted; nil for none.
func usedSecrets(used map[string]bool) *yaml.Node {
	if len(used) == 0 {
		return nil
	}
	var names []string
	for n := range used {
		names = append(names, n)
	}
	slices.Sort(names)
	list := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
	for _, n := range names {
		list.Content = append(list.Content, scalar(n))
	}
	return list
}

// echoed is the text of a send as the console shows its echo: each
// ${name} of a secret as many '*' as its value has bytes, other
// references as the session's variables give them. The text itself when
// it does not expand.
func (s *Session) echoed(sent string) string {
	t, err := steps.ParseTemplate(sent)
	if err != nil || t.IsStatic() {
		return sent
	}
	out, err := t.Expand(func(name string) (any, bool) {
		if v, ok := s.opts.Secrets.Lookup(name); ok {
			return strings.Repeat("*", len(v)), true
		}
		return s.lookup(name)
	}, nil)
	if err != nil {
		return sent
	}
	return out
}

// secretHistory is the line editor's history with each secret's value
// in a typed line kept as ${name}, so the history file never holds one.
type secretHistory struct {
	term.History
	s *Session
}

func (h secretHistory) Add(entry string) { h.History.Add(h.s.asReference(entry)) }

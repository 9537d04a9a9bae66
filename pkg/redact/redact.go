// Package redact keeps the values of a run's secrets out of everything
// hilrun writes: console logs and the console stream get each occurrence
// replaced by as many '*' as it has bytes (so offsets, cursors and timeline
// entries stay true), reports and replies get "***name***".
package redact

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
)

// MinLen is the shortest secret hilrun takes, in bytes: a shorter value
// would redact ordinary output.
const MinLen = 6

// Secret is one named secret value.
type Secret struct {
	Name  string
	Value string
}

// Set is the secrets of a run. A nil *Set has none and redacts nothing;
// its methods are safe for concurrent use, as a Set never changes.
type Set struct {
	secrets []Secret // longest value first
	maxLen  int
}

// New makes the set of secrets. It refuses a secret shorter than MinLen
// and a name given twice.
func New(secrets []Secret) (*Set, error) {
	s := &Set{}
	seen := map[string]bool{}
	for _, sec := range secrets {
		if seen[sec.Name] {
			return nil, fmt.Errorf("secret %s is given twice", sec.Name)
		}
		seen[sec.Name] = true
		if len(sec.Value) < MinLen {
			return nil, fmt.Errorf("secret %s is %d bytes long, shorter than the %d bytes a secret needs (a shorter value would hide ordinary output)", sec.Name, len(sec.Value), MinLen)
		}
		s.secrets = append(s.secrets, sec)
		s.maxLen = max(s.maxLen, len(sec.Value))
	}
	slices.SortStableFunc(s.secrets, func(a, b Secret) int { return len(b.Value) - len(a.Value) })
	return s, nil
}

// Empty reports whether s has no secrets.
func (s *Set) Empty() bool { return s == nil || len(s.secrets) == 0 }

// Names are the secrets' names, sorted.
func (s *Set) Names() []string {
	if s == nil {
		return nil
	}
	var names []string
	for _, sec := range s.secrets {
		names = append(names, sec.Name)
	}
	slices.Sort(names)
	return names
}

// Lookup is the value of the secret name.
func (s *Set) Lookup(name string) (string, bool) {
	if s == nil {
		return "", false
	}
	for _, sec := range s.secrets {
		if sec.Name == name {
			return sec.Value, true
		}
	}
	return "", false
}

// Contains reports whether text holds the value of a secret.
func (s *Set) Contains(text string) bool {
	if s == nil {
		return false
	}
	for _, sec := range s.secrets {
		if strings.Contains(text, sec.Value) {
			return true
		}
	}
	return false
}

// Merge is a set with the secrets of s and t; a name in both keeps t's.
func (s *Set) Merge(t *Set) *Set {
	if s.Empty() {
		return t
	}
	if t.Empty() {
		return s
	}
	var all []Secret
	for _, sec := range s.secrets {
		if _, ok := t.Lookup(sec.Name); !ok {
			all = append(all, sec)
		}
	}
	m, _ := New(append(all, t.secrets...)) // both were checked
	return m
}

// String is text with each secret's value replaced by ***name***.
func (s *Set) String(text string) string {
	if s == nil {
		return text
	}
	for _, sec := range s.secrets {
		if strings.Contains(text, sec.Value) {
			text = strings.ReplaceAll(text, sec.Value, "***"+sec.Name+"***")
		}
	}
	return text
}

// Bytes is p with each secret's value replaced by ***name***; p itself is
// not changed.
func (s *Set) Bytes(p []byte) []byte {
	if s == nil {
		return p
	}
	for _, sec := range s.secrets {
		if bytes.Contains(p, []byte(sec.Value)) {
			p = bytes.ReplaceAll(p, []byte(sec.Value), []byte("***"+sec.Name+"***"))
		}
	}
	return p
}

// Mask is p with each byte of every secret's value replaced by '*': as
// long as p, so offsets into it stay true. p itself is not changed.
func (s *Set) Mask(p []byte) []byte {
	if s.Empty() {
		return p
	}
	var out []byte
	for _, sec := range s.secrets {
		v := []byte(sec.Value)
		for from := 0; ; {
			i := bytes.Index(p[from:], v)
			if i < 0 {
				break
			}
			if out == nil {
				out = slices.Clone(p)
			}
			for j := from + i; j < from+i+len(v); j++ {
				out[j] = '*'
			}
			from += i + 1
		}
	}
	if out == nil {
		return p
	}
	return out
}

// Value is v with every text in it redacted (String): strings, bytes, and
// the elements of lists and maps, copied; other values are returned as
// they are.
func (s *Set) Value(v any) any {
	if s == nil {
		return v
	}
	switch v := v.(type) {
	case string:
		return s.String(v)
	case []byte:
		return s.Bytes(v)
	case []string:
		out := make([]string, len(v))
		for i, e := range v {
			out[i] = s.String(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = s.Value(e)
		}
		return out
	case map[string]any:
		return s.Map(v)
	case map[string]string:
		out := make(map[string]string, len(v))
		for k, e := range v {
			out[s.String(k)] = s.String(e)
		}
		return out
	}
	if v != nil {
		// A value of another type that prints a secret is kept as its
		// redacted text.
		if t := fmt.Sprint(v); s.Contains(t) {
			return s.String(t)
		}
	}
	return v
}

// Map is m with its keys and values redacted (Value), copied; nil stays
// nil.
func (s *Set) Map(m map[string]any) map[string]any {
	if s == nil || m == nil {
		return m
	}
	out := make(map[string]any, len(m))
	for k, e := range m {
		out[s.String(k)] = s.Value(e)
	}
	return out
}

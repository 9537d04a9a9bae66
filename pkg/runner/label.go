package runner

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/hilrun/hilrun/pkg/steps"
)

// labelLimit bounds a label built from values, in runes, as Title bounds
// the labels it makes.
const labelLimit = 60

// title is the name reports show for step s: Title, with the values of the
// ${name} references it holds where they are known now (the text a send
// sends, not its template), and the count of an unnamed repeat. A
// reference that cannot be filled in leaves the text as written.
func (r *run) title(s *steps.Step) string {
	if s.Name == "" {
		switch {
		case s.Kind == steps.KindRepeat:
			return repeatTitle(s)
		case s.Kind == steps.KindSend && s.Text != nil && !s.Text.IsStatic():
			return r.fill(*s.Text, s.Title())
		case s.Kind == steps.KindExpect && len(s.Expect) > 0 && !s.Expect[0].Text.IsStatic():
			return r.fill(s.Expect[0].Text, s.Title())
		}
		return s.Title()
	}
	if s.Kind == steps.KindGroup || !strings.Contains(s.Name, "${") {
		// Group names make the group paths reports nest by: they stay as
		// written.
		return s.Name
	}
	t, err := steps.ParseTemplate(s.Name)
	if err != nil {
		return s.Name
	}
	return r.fill(t, s.Name)
}

// writtenTitle is the name of step s without values, for a step that
// did not run: Title, and the count of an unnamed repeat.
func writtenTitle(s *steps.Step) string {
	if s.Name == "" && s.Kind == steps.KindRepeat {
		return repeatTitle(s)
	}
	return s.Title()
}

// fill expands t for a label, or returns fallback when it cannot.
func (r *run) fill(t steps.Template, fallback string) string {
	text, err := t.ExpandMax(r.lookup, nil, r.maxValue())
	if err != nil {
		return fallback
	}
	if text == "" {
		return `""`
	}
	if rs := []rune(text); len(rs) > labelLimit {
		return string(rs[:labelLimit-1]) + "…"
	}
	return text
}

// repeatTitle names an unnamed repeat by how often it runs: "10 times",
// "10 times every 100ms", "for 5s".
func repeatTitle(s *steps.Step) string {
	var t string
	switch {
	case s.Count == 1:
		t = "once"
	case s.Count > 1:
		t = fmt.Sprintf("%d times", s.Count)
	case s.For > 0:
		t = "for " + s.For.String()
	default:
		return s.Title()
	}
	if s.Every > 0 {
		t += " every " + s.Every.String()
	}
	if s.Count > 0 && s.For > 0 {
		t += ", at most " + s.For.String()
	}
	return t
}

// sentValue is what a send step records as data["sent"]: the bytes sent,
// as a string when they are UTF-8 so that JSON holds them exactly, else as
// bytes, which reports escape.
func sentValue(data []byte) any {
	if utf8.Valid(data) {
		return string(data)
	}
	return bytes.Clone(data)
}

// Package selectx holds what selects the cases of a run beyond their
// names: -m marker expressions over tags, and quarantine lists.
package selectx

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"
)

// MaxMarkerBytes bounds a -m expression.
const MaxMarkerBytes = 4096

// maxMarkerDepth bounds how deep parentheses and nots nest.
const maxMarkerDepth = 100

// Marker is a parsed -m expression: tags combined with and, or, not and
// parentheses, as pytest's marker expressions. A tag is true for a case
// that has it.
type Marker struct {
	src  string
	eval func(tags []string) bool
}

// String is the expression as given.
func (m *Marker) String() string { return m.src }

// Match reports whether the expression is true for a case with tags.
func (m *Marker) Match(tags []string) bool { return m.eval(tags) }

// SyntaxError is a -m expression that does not parse: Col counts the
// expression's characters from 1.
type SyntaxError struct {
	Expr string
	Col  int
	Msg  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("-m:1:%d: %s, in %q", e.Col, e.Msg, e.Expr)
}

// ParseMarker parses a -m expression. The empty expression is an error:
// -m without an expression is a mistake, not a choice of every case.
func ParseMarker(s string) (*Marker, error) {
	if len(s) > MaxMarkerBytes {
		return nil, &SyntaxError{Expr: s[:32] + "…", Col: 1, Msg: fmt.Sprintf("the expression is %d bytes, more than the limit of %d", len(s), MaxMarkerBytes)}
	}
	toks, err := lexMarker(s)
	if err != nil {
		return nil, err
	}
	p := &markerParser{src: s, toks: toks}
	if len(toks) == 0 {
		return nil, p.fail(1, "the expression is empty: want tags combined with and, or, not and parentheses, like 'smoke and not slow'")
	}
	e, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.text != "" {
		return nil, p.fail(t.col, fmt.Sprintf("unexpected %q: want and or or between tags", t.text))
	}
	return &Marker{src: s, eval: e}, nil
}

// token is a word or a parenthesis, at its column.
type token struct {
	text string
	col  int
}

// lexMarker splits s into words and parentheses.
func lexMarker(s string) ([]token, error) {
	var toks []token
	col := 0
	start, word := 0, strings.Builder{}
	flush := func() {
		if word.Len() > 0 {
			toks = append(toks, token{word.String(), start})
			word.Reset()
		}
	}
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		i += n
		col++
		switch {
		case r == '(' || r == ')':
			flush()
			toks = append(toks, token{string(r), col})
		case r == ' ' || r == '\t' || r == '\n' || r == '\r':
			flush()
		case isTagRune(r):
			if word.Len() == 0 {
				start = col
			}
			word.WriteRune(r)
		default:
			return nil, &SyntaxError{Expr: s, Col: col, Msg: fmt.Sprintf("unexpected %q: a tag is letters, digits, _, - and .", r)}
		}
	}
	flush()
	return toks, nil
}

func isTagRune(r rune) bool {
	return r == '_' || r == '-' || r == '.' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
}

type markerParser struct {
	src  string
	toks []token
	i    int
}

func (p *markerParser) peek() token {
	if p.i < len(p.toks) {
		return p.toks[p.i]
	}
	return token{col: utf8.RuneCountInString(p.src) + 1}
}

func (p *markerParser) fail(col int, msg string) error {
	return &SyntaxError{Expr: p.src, Col: col, Msg: msg}
}

func (p *markerParser) or(depth int) (func([]string) bool, error) {
	l, err := p.and(depth)
	if err != nil {
		return nil, err
	}
	for p.peek().text == "or" {
		p.i++
		r, err := p.and(depth)
		if err != nil {
			return nil, err
		}
		a := l
		l = func(t []string) bool { return a(t) || r(t) }
	}
	return l, nil
}

func (p *markerParser) and(depth int) (func([]string) bool, error) {
	l, err := p.not(depth)
	if err != nil {
		return nil, err
	}
	for p.peek().text == "and" {
		p.i++
		r, err := p.not(depth)
		if err != nil {
			return nil, err
		}
		a := l
		l = func(t []string) bool { return a(t) && r(t) }
	}
	return l, nil
}

func (p *markerParser) not(depth int) (func([]string) bool, error) {
	if depth > maxMarkerDepth {
		return nil, p.fail(p.peek().col, fmt.Sprintf("the expression nests deeper than %d", maxMarkerDepth))
	}
	if p.peek().text == "not" {
		p.i++
		e, err := p.not(depth + 1)
		if err != nil {
			return nil, err
		}
		return func(t []string) bool { return !e(t) }, nil
	}
	return p.primary(depth)
}

func (p *markerParser) primary(depth int) (func([]string) bool, error) {
	t := p.peek()
	switch t.text {
	case "":
		return nil, p.fail(t.col, "the expression ends too early: want a tag, not or (")
	case "and", "or", ")":
		return nil, p.fail(t.col, fmt.Sprintf("unexpected %q: want a tag, not or (", t.text))
	case "(":
		p.i++
		e, err := p.or(depth + 1)
		if err != nil {
			return nil, err
		}
		if c := p.peek(); c.text != ")" {
			return nil, p.fail(c.col, fmt.Sprintf("the ( at column %d is not closed", t.col))
		}
		p.i++
		return e, nil
	}
	p.i++
	tag := t.text
	return func(tags []string) bool { return slices.Contains(tags, tag) }, nil
}

package steps

import (
	"fmt"
	"strings"
)

// Template is text with ${name} references to variables. "$${" stands for a
// literal "${". A name may be a variable, or env.NAME for an environment
// variable of the hilrun process.
type Template struct {
	Raw   string
	parts []tmplPart
}

type tmplPart struct {
	lit  string
	name string // set for a reference
}

// ParseTemplate splits s into literal text and variable references. It fails
// on an unclosed or empty reference.
func ParseTemplate(s string) (Template, error) {
	t := Template{Raw: s}
	var lit strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "$${") {
			lit.WriteString("${")
			i += 3
			continue
		}
		if strings.HasPrefix(s[i:], "${") {
			end := strings.IndexByte(s[i+2:], '}')
			if end < 0 {
				return Template{}, fmt.Errorf("unclosed ${ at offset %d (write $${ for a literal ${)", i)
			}
			name := strings.TrimSpace(s[i+2 : i+2+end])
			if !validRefName(name) {
				return Template{}, fmt.Errorf("bad variable reference ${%s}: expected a name like ${version} or ${env.HOME}", s[i+2:i+2+end])
			}
			if lit.Len() > 0 {
				t.parts = append(t.parts, tmplPart{lit: lit.String()})
				lit.Reset()
			}
			t.parts = append(t.parts, tmplPart{name: name})
			i += 2 + end + 1
			continue
		}
		lit.WriteByte(s[i])
		i++
	}
	if lit.Len() > 0 {
		t.parts = append(t.parts, tmplPart{lit: lit.String()})
	}
	return t, nil
}

func validRefName(name string) bool {
	if name == "" {
		return false
	}
	segs := strings.Split(name, ".")
	for _, seg := range segs {
		if !validName(seg) {
			return false
		}
	}
	// branches.NAME.var has three; env.NAME and the like two.
	return len(segs) <= 2 || len(segs) == 3 && segs[0] == "branches"
}

// validName reports whether s is a variable name: a letter or underscore,
// then letters, digits or underscores.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case r == '_', r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z':
		case i > 0 && r >= '0' && r <= '9':
		default:
			return false
		}
	}
	return true
}

// IsStatic reports whether t has no references.
func (t Template) IsStatic() bool {
	for _, p := range t.parts {
		if p.name != "" {
			return false
		}
	}
	return true
}

// Refs lists the names t refers to, in order.
func (t Template) Refs() []string {
	var names []string
	for _, p := range t.parts {
		if p.name != "" {
			names = append(names, p.name)
		}
	}
	return names
}

// Lookup finds the value of a variable reference.
type Lookup func(name string) (any, bool)

// Expand replaces every reference with its value, formatted with fmt's %v,
// after passing it through quote (nil for none).
func (t Template) Expand(lookup Lookup, quote func(string) string) (string, error) {
	return t.ExpandMax(lookup, quote, 0)
}

// TooLongError is the error of ExpandMax when the text would be longer
// than Max bytes.
type TooLongError struct {
	Max int
}

func (e *TooLongError) Error() string {
	return fmt.Sprintf("the text would be longer than the value limit of %d bytes", e.Max)
}

// ExpandMax is Expand that stops with a *TooLongError before the text
// grows past max bytes; max 0 means no limit.
func (t Template) ExpandMax(lookup Lookup, quote func(string) string, max int) (string, error) {
	var b strings.Builder
	add := func(s string) error {
		if max > 0 && b.Len()+len(s) > max {
			return &TooLongError{Max: max}
		}
		b.WriteString(s)
		return nil
	}
	for _, p := range t.parts {
		if p.name == "" {
			if err := add(p.lit); err != nil {
				return "", err
			}
			continue
		}
		v, ok := lookup(p.name)
		if !ok {
			return "", fmt.Errorf("variable %q is not defined", p.name)
		}
		s := FormatValue(v)
		if quote != nil {
			s = quote(s)
		}
		if err := add(s); err != nil {
			return "", err
		}
	}
	return b.String(), nil
}

// FormatValue renders a variable's value as text for interpolation.
func FormatValue(v any) string {
	switch v := v.(type) {
	case nil:
		return ""
	case string:
		return v
	case []byte:
		return string(v)
	default:
		return fmt.Sprint(v)
	}
}

package steps

import (
	"reflect"
	"regexp"
	"strconv"
	"strings"
)

// spot is where a node of a value sits: under the spot parent (0 under
// none: the root), at token, a key or a list index.
type spot struct {
	parent int
	token  string
}

// pointer is the JSON pointer (RFC 6901) of spot p; "" is the root.
func (t *valueTree) pointer(p int) string {
	var tokens []string
	for p > 0 && t.spots[p-1].parent > 0 {
		tokens = append(tokens, escapeToken(t.spots[p-1].token))
		p = t.spots[p-1].parent
	}
	if len(tokens) == 0 {
		return ""
	}
	var b strings.Builder
	for i := len(tokens) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(tokens[i])
	}
	return b.String()
}

// child is the JSON pointer of token under spot parent (the root when
// parent is 0 and token "").
func (t *valueTree) child(parent int, token string) string {
	if parent == 0 {
		return ""
	}
	return t.pointer(parent) + "/" + escapeToken(token)
}

// escapeToken writes a key as a JSON pointer token: ~ as ~0, / as ~1.
func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// pos turns a position the decoder made (its Line a spot) into its JSON
// pointer under the value's file; other positions stay.
func (t *valueTree) pos(p Pos) Pos {
	if p.File != t.inner {
		return p
	}
	if p.Line < 1 || p.Line > len(t.spots) {
		return Pos{File: t.file}
	}
	return Pos{File: t.file, Pointer: t.pointer(p.Line)}
}

// usedAtLine is the decoder's message about a step id used twice, which
// names the first use by its line: a spot here.
var usedAtLine = regexp.MustCompile(`(is already used by the step) at line (\d+)$`)

// errors places the decoder's errors.
func (t *valueTree) errors(err error) error {
	list, ok := err.(ErrorList)
	if !ok {
		return err
	}
	for _, e := range list {
		e.Pos = t.pos(e.Pos)
		if m := usedAtLine.FindStringSubmatchIndex(e.Msg); m != nil {
			line, _ := strconv.Atoi(e.Msg[m[4]:m[5]])
			at := t.pos(Pos{File: t.inner, Line: line})
			e.Msg = e.Msg[:m[3]] + " at " + at.String()
		}
	}
	return list
}

// locate places every position of seq, and names it file. named says
// whether the value gave the sequence a name.
func (t *valueTree) locate(seq *Sequence, named bool) {
	seq.File = t.file
	if !named {
		seq.Name = defaultName(t.file)
	}
	seen := map[uintptr]bool{}
	t.walkPos(reflect.ValueOf(seq), seen)
}

var (
	posType    = reflect.TypeOf(Pos{})
	deviceType = reflect.TypeOf(Device{})
	stepsPkg   = posType.PkgPath()
)

// walkPos places every Pos held in v, following the exported fields,
// pointers, lists and maps of this package's types only (an expression's
// compiled program is none of ours). A device's PortFrom, which names its
// position as text, follows it.
func (t *valueTree) walkPos(v reflect.Value, seen map[uintptr]bool) {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return
		}
		seen[v.Pointer()] = true
		t.walkPos(v.Elem(), seen)
	case reflect.Slice:
		for i := range v.Len() {
			t.walkPos(v.Index(i), seen)
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			t.walkPos(it.Value(), seen)
		}
	case reflect.Struct:
		if v.Type() == posType {
			if v.CanSet() {
				v.Set(reflect.ValueOf(t.pos(v.Interface().(Pos))))
			}
			return
		}
		if v.Type().PkgPath() != stepsPkg {
			return
		}
		if v.Type() == deviceType && v.CanAddr() {
			d := v.Addr().Interface().(*Device)
			if d.PortFrom != "" && d.PortFrom == d.Pos.String() {
				d.PortFrom = t.pos(d.Pos).String()
			}
		}
		for i := range v.NumField() {
			if f := v.Type().Field(i); f.IsExported() {
				t.walkPos(v.Field(i), seen)
			}
		}
	}
}

package mcpserver

import (
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// nullField returns where in v (a tool's structured result) JSON would
// write null for a value its output schema requires, or "" when there is
// none. The output schemas are made from the result types (outputSchema),
// with no null in them: a struct field is required unless its tag says
// omitempty or omitzero, and a Go value of the type can only break its own
// schema with a nil slice, map or pointer in such a field, or as an
// element of a list or map (an interface, typed any, accepts anything).
// This check costs a walk over the parts of v that can hold one, instead
// of the JSON round trip and full schema check that mcp-go's output
// validation makes on every call (the tests make that one on every result
// they get).
func nullField(v any) string {
	return nullIn(reflect.ValueOf(v), "")
}

// nullableField is a struct field nullIn looks at: one that can be nil,
// or hold something that can.
type nullableField struct {
	index    int
	name     string // "" for an embedded struct, whose fields JSON promotes
	optional bool   // omitempty or omitzero: nil is left out
	nilable  bool   // a slice, map or pointer
	deep     bool   // its value can hold a nil that matters
}

// nullableFields caches, per struct type, the fields nullIn looks at.
var nullableFields sync.Map // reflect.Type -> []nullableField

func fieldsOf(t reflect.Type) []nullableField {
	if v, ok := nullableFields.Load(t); ok {
		return v.([]nullableField)
	}
	var out []nullableField
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		// encoding/json promotes the fields of an embedded struct,
		// exported or not.
		if !f.IsExported() && !f.Anonymous {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" && opts == "" {
			continue
		}
		nf := nullableField{index: i, name: name}
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			nf.name = ""
		} else if name == "" {
			nf.name = f.Name
		}
		nf.optional = strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
		switch f.Type.Kind() {
		case reflect.Slice, reflect.Map, reflect.Pointer:
			nf.nilable = true
		}
		nf.deep = canHoldNil(f.Type, map[reflect.Type]bool{})
		if (nf.nilable && !nf.optional) || nf.deep {
			out = append(out, nf)
		}
	}
	nullableFields.Store(t, out)
	return out
}

// canHoldNil reports whether a value of type t can hold, inside it, a nil
// that nullIn reports.
func canHoldNil(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return true
	}
	seen[t] = true
	switch t.Kind() {
	case reflect.Pointer:
		return canHoldNil(t.Elem(), seen)
	case reflect.Slice, reflect.Array, reflect.Map:
		switch t.Elem().Kind() {
		case reflect.Slice, reflect.Map, reflect.Pointer:
			return true
		}
		return canHoldNil(t.Elem(), seen)
	case reflect.Struct:
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" && opts == "" {
				continue
			}
			optional := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
			switch f.Type.Kind() {
			case reflect.Slice, reflect.Map, reflect.Pointer:
				if !optional {
					return true
				}
			}
			if canHoldNil(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

func nullIn(v reflect.Value, path string) string {
	for v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface {
		if v.IsNil() {
			return ""
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		for _, f := range fieldsOf(v.Type()) {
			fv := v.Field(f.index)
			at := path
			if f.name != "" {
				at = path + "." + f.name
			}
			if f.nilable && fv.IsNil() {
				if f.optional {
					continue
				}
				return at
			}
			if f.deep {
				if p := nullIn(fv, at); p != "" {
					return p
				}
			}
		}
	case reflect.Slice, reflect.Array:
		if !canHoldNil(v.Type(), map[reflect.Type]bool{}) {
			return ""
		}
		for i := 0; i < v.Len(); i++ {
			e, at := v.Index(i), path+"["+strconv.Itoa(i)+"]"
			if nilValue(e) {
				return at
			}
			if p := nullIn(e, at); p != "" {
				return p
			}
		}
	case reflect.Map:
		if !canHoldNil(v.Type(), map[reflect.Type]bool{}) {
			return ""
		}
		iter := v.MapRange()
		for iter.Next() {
			e, at := iter.Value(), path+"."+iter.Key().String()
			if nilValue(e) {
				return at
			}
			if p := nullIn(e, at); p != "" {
				return p
			}
		}
	}
	return ""
}

// nilValue reports whether v is a nil slice, map or pointer, which JSON
// writes as null.
func nilValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Slice, reflect.Map, reflect.Pointer:
		return v.IsNil()
	}
	return false
}

package mcpserver

import (
	"reflect"
	"strconv"
	"strings"
)

// nullField returns where in v (a tool's structured result) JSON would
// write null for a value its output schema requires, or "" when there is
// none. The output schemas are made from the result types (outputSchema),
// with no null in them: a struct field is required unless its tag says
// omitempty or omitzero, and a Go value of the type can only break its own
// schema with a nil slice, map or pointer in such a field (an interface,
// typed any, accepts anything). This check costs a walk over the value
// instead of the JSON round trip and full schema check that mcp-go's
// output validation makes on every call (the tests make that one on every
// result they get).
func nullField(v any) string {
	return nullIn(reflect.ValueOf(v), "")
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
		t := v.Type()
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
			fv := v.Field(i)
			if f.Anonymous && name == "" {
				if p := nullIn(fv, path); p != "" {
					return p
				}
				continue
			}
			if name == "" {
				name = f.Name
			}
			optional := strings.Contains(","+opts+",", ",omitempty,") || strings.Contains(","+opts+",", ",omitzero,")
			switch fv.Kind() {
			case reflect.Slice, reflect.Map, reflect.Pointer:
				if fv.IsNil() {
					if optional {
						continue
					}
					return path + "." + name
				}
			}
			if p := nullIn(fv, path+"."+name); p != "" {
				return p
			}
		}
	case reflect.Slice, reflect.Array:
		if !mayHoldNull(v.Type().Elem()) {
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
		if !mayHoldNull(v.Type().Elem()) {
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

// mayHoldNull reports whether a value of type t can be or hold a nil
// slice, map or pointer: false for scalars and interfaces (any accepts
// null).
func mayHoldNull(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Map, reflect.Struct, reflect.Array:
		return true
	}
	return false
}

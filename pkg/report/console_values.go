package report

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// labelledValues formats data["label"] and data["values"], the shape steps use
// for numbers meant to be read in hex, such as memory words. Integers print as
// 0x… padded to data["width"] bits (8, 16, 32, 64: the width of a memory
// step) when that is set; anything else prints with %v.
func labelledValues(data map[string]any) (label, values string, ok bool) {
	label, ok = data["label"].(string)
	if !ok {
		return "", "", false
	}
	v := reflect.ValueOf(data["values"])
	if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
		return "", "", false
	}
	digits := 0
	if w, ok := toInt(data["width"]); ok && w > 0 && w <= 64 && w%4 == 0 {
		digits = int(w) / 4
	}
	parts := make([]string, v.Len())
	for i := range parts {
		parts[i] = hexValue(v.Index(i).Interface(), digits)
	}
	return withAddress(label, data["address"]), strings.Join(parts, " "), true
}

func hexValue(x any, digits int) string {
	if n, ok := x.(json.Number); ok {
		// A number read back from the event file, exact to 64 bits.
		if u, err := strconv.ParseUint(string(n), 10, 64); err == nil {
			return fmt.Sprintf("0x%0*x", digits, u)
		}
		if f, err := n.Float64(); err == nil {
			x = f
		}
	}
	rv := reflect.ValueOf(x)
	switch rv.Kind() {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprintf("0x%0*x", digits, rv.Uint())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if n := rv.Int(); n >= 0 {
			return fmt.Sprintf("0x%0*x", digits, n)
		}
		return fmt.Sprint(rv.Int())
	case reflect.Float32, reflect.Float64:
		// Numbers that went through JSON or YAML arrive as floats.
		if f := rv.Float(); f >= 0 && f <= 1<<53 && f == float64(uint64(f)) {
			return fmt.Sprintf("0x%0*x", digits, uint64(f))
		}
	}
	return cleanLine(fmt.Sprint(x))
}

func toInt(x any) (int64, bool) {
	if n, ok := x.(json.Number); ok {
		i, err := n.Int64()
		return i, err == nil
	}
	rv := reflect.ValueOf(x)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return rv.Int(), true
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return int64(rv.Uint()), true
	case reflect.Float32, reflect.Float64:
		return int64(rv.Float()), true
	}
	return 0, false
}

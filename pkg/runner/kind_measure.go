package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"

	"github.com/hilrun/hilrun/pkg/steps"
)

func init() { leafRunners[steps.KindMeasure] = (*run).measure }

// Measurement is one value a measure step measured, with its unit, its
// limits and whether it was within them: the shape every report reads.
type Measurement struct {
	Name string `json:"name"`
	// Value is a float64 for a number (integers included), a string for
	// text, or a bool; read back from an event file a number is a
	// json.Number.
	Value any    `json:"value"`
	Unit  string `json:"unit,omitempty"`
	// Min and Max bound a number, both included; nil for no bound.
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
	// Equals is the one value allowed; nil for none.
	Equals any `json:"equals,omitempty"`
	// Regex is the pattern the value's text must match; "" for none.
	Regex string `json:"regex,omitempty"`
	// Outcome is Passed when the value is within its limits (or it has
	// none), else Failed.
	Outcome Status `json:"outcome"`
}

// measure evaluates the step's value and checks it against its limits:
// a value outside them fails the step, saying where it is and where it
// should be ("vbat = 3.71 V, outside [3.0, 3.6] V").
func (r *run) measure(ctx context.Context, s *steps.Step, res *StepResult) error {
	a, ok := s.Args.(*steps.MeasureArgs)
	if !ok || a.Value == nil {
		return fmt.Errorf("measure step without its value")
	}
	out, err := r.eval(ctx, "measure "+a.Name+" value "+a.Value.Src, a.Value, nil)
	values := r.describeNames(a.Value.Names)
	if se := (*stepError)(nil); errors.As(err, &se) {
		se.expected, se.received = limitsText(a), values
	}
	if err != nil {
		return err
	}
	v, err := measuredValue(a.Name, out)
	if err != nil {
		return &stepError{msg: err.Error(), expected: limitsText(a), received: values}
	}
	m := &Measurement{Name: a.Name, Value: v, Unit: a.Unit, Min: a.Min, Max: a.Max, Equals: a.Equals, Outcome: Passed}
	if a.Regex != nil {
		m.Regex = a.Regex.String()
	}
	res.Measurement = m
	why := checkMeasure(a, v)
	res.Message = a.Name + " = " + withUnit(FormatMeasured(v), a.Unit)
	if why == "" {
		res.Message += passedText(a)
		return nil
	}
	m.Outcome = Failed
	return &stepError{msg: res.Message + ", " + why, expected: limitsText(a), received: withUnit(FormatMeasured(v), a.Unit)}
}

// passedText says how a value that passed met its limits.
func passedText(a *steps.MeasureArgs) string {
	switch {
	case a.Min != nil && a.Max != nil:
		return ", within " + limitsText(a)
	case a.Min != nil:
		return ", at least " + withUnit(a.MinText, a.Unit)
	case a.Max != nil:
		return ", at most " + withUnit(a.MaxText, a.Unit)
	case a.Regex != nil:
		return ", matching " + a.Regex.String()
	}
	return ""
}

// measuredValue makes an expression's result a measurement's value: a
// float64, a string or a bool.
func measuredValue(name string, out any) (any, error) {
	switch x := out.(type) {
	case string, bool:
		return x, nil
	case []byte:
		return string(x), nil
	}
	if f, ok := asFloat(out); ok {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("measure %s: the value is %v, not a number a report can hold", name, f)
		}
		return f, nil
	}
	return nil, fmt.Errorf("measure %s: the value is %T (%v); want a number, text or a boolean", name, out, clipValue(out))
}

// checkMeasure says how v misses the limits of a, "" when it is within
// them.
func checkMeasure(a *steps.MeasureArgs, v any) string {
	switch {
	case a.Min != nil || a.Max != nil:
		f, ok := v.(float64)
		if !ok {
			return fmt.Sprintf("which is %s, not a number (num(...) makes a number of text)", kindOf(v))
		}
		switch {
		case a.Min != nil && a.Max != nil && (f < *a.Min || f > *a.Max):
			return "outside " + limitsText(a)
		case a.Min != nil && a.Max == nil && f < *a.Min:
			return "below its min " + withUnit(a.MinText, a.Unit)
		case a.Max != nil && a.Min == nil && f > *a.Max:
			return "above its max " + withUnit(a.MaxText, a.Unit)
		}
	case a.Equals != nil:
		if !measureEquals(v, a.Equals) {
			return "not " + withUnit(FormatMeasured(a.Equals), a.Unit)
		}
	case a.Regex != nil:
		text := FormatMeasured(v)
		if s, ok := v.(string); ok {
			text = s
		}
		if !a.Regex.MatchString(text) {
			return "which does not match " + a.Regex.String()
		}
	}
	return ""
}

// measureEquals compares a value with equals: numbers by value, anything
// else as text.
func measureEquals(v, want any) bool {
	f, ok1 := asFloat(v)
	g, ok2 := asFloat(want)
	if ok1 && ok2 {
		return f == g
	}
	vs, ws := fmt.Sprint(v), fmt.Sprint(want)
	if s, ok := v.(string); ok {
		vs = s
	}
	return vs == ws
}

// limitsText writes the limits of a as the messages show them: "[3.0,
// 3.6] V", "≥ 3.0 V", "≤ 3.6 V", "= 7", "~ ^v[0-9]"; "" for none.
func limitsText(a *steps.MeasureArgs) string {
	switch {
	case a.Min != nil && a.Max != nil:
		return withUnit("["+a.MinText+", "+a.MaxText+"]", a.Unit)
	case a.Min != nil:
		return "≥ " + withUnit(a.MinText, a.Unit)
	case a.Max != nil:
		return "≤ " + withUnit(a.MaxText, a.Unit)
	case a.Equals != nil:
		return "= " + withUnit(FormatMeasured(a.Equals), a.Unit)
	case a.Regex != nil:
		return "~ " + a.Regex.String()
	}
	return ""
}

// FormatMeasured writes a measured value as the reports show it: a
// number to 12 significant digits (3.71, 3300, 0.3 for 0.1 + 0.2; the
// JSON report and the CSV hold every digit), text quoted.
func FormatMeasured(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	if f, ok := asFloat(v); ok {
		return FormatNumber(f)
	}
	return fmt.Sprint(v)
}

// FormatNumber writes a number as FormatMeasured does.
func FormatNumber(f float64) string { return strconv.FormatFloat(f, 'g', 12, 64) }

// withUnit is text followed by its unit, if any: "3.71 V".
func withUnit(text, unit string) string {
	if unit == "" {
		return text
	}
	return text + " " + unit
}

func kindOf(v any) string {
	switch v.(type) {
	case string:
		return "text"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("a %T", v)
}

// asFloat is a number of any of the types expressions make as a float64.
func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case float32:
		return float64(x), true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case int32:
		return float64(x), true
	case uint:
		return float64(x), true
	case uint64:
		return float64(x), true
	case uint32:
		return float64(x), true
	case uint16:
		return float64(x), true
	case uint8:
		return float64(x), true
	case int16:
		return float64(x), true
	case int8:
		return float64(x), true
	}
	return 0, false
}

// clipValue is v as text, at most 60 characters, for a message.
func clipValue(v any) string {
	s := fmt.Sprint(v)
	if r := []rune(s); len(r) > 60 {
		return string(r[:59]) + "…"
	}
	return s
}

// UnmarshalJSON reads a Measurement as MarshalJSON wrote it, with its
// numbers as float64 whatever the decoder's settings (an event file is
// read with UseNumber), so that a value read back has the type it had.
func (m *Measurement) UnmarshalJSON(b []byte) error {
	type plain Measurement
	var raw struct {
		plain
		Value  json.RawMessage `json:"value"`
		Equals json.RawMessage `json:"equals"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*m = Measurement(raw.plain)
	var err error
	if m.Value, err = scalarJSON(raw.Value); err != nil {
		return fmt.Errorf("measurement %s: value: %w", m.Name, err)
	}
	if m.Equals, err = scalarJSON(raw.Equals); err != nil {
		return fmt.Errorf("measurement %s: equals: %w", m.Name, err)
	}
	return nil
}

// scalarJSON decodes a number as a float64, text or a boolean; nil for
// nothing.
func scalarJSON(b json.RawMessage) (any, error) {
	if len(b) == 0 || string(b) == "null" {
		return nil, nil
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return nil, err
	}
	switch v.(type) {
	case float64, string, bool:
		return v, nil
	}
	return nil, fmt.Errorf("want a number, text or a boolean, found %s", b)
}

package report

import (
	"encoding"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
)

// jsonReport is the document WriteJSON writes. Its field order is the order
// of the output.
type jsonReport struct {
	Passed    bool           `json:"passed"`
	Sequences []jsonSequence `json:"sequences"`
}

type jsonSequence struct {
	Name       string            `json:"name"`
	File       string            `json:"file"`
	Status     string            `json:"status"`
	DurationMS millis            `json:"duration_ms"`
	Error      string            `json:"error,omitempty"`
	Logs       map[string]string `json:"logs,omitempty"`
	Steps      []jsonStep        `json:"steps"`
}

type jsonStep struct {
	Index      int            `json:"index"`
	Path       string         `json:"path"`
	Kind       string         `json:"kind"`
	Name       string         `json:"name"`
	Group      string         `json:"group,omitempty"`
	Status     string         `json:"status"`
	StartedMS  millis         `json:"started_ms"`
	DurationMS millis         `json:"duration_ms"`
	Message    string         `json:"message,omitempty"`
	Expected   string         `json:"expected,omitempty"`
	Received   string         `json:"received,omitempty"`
	Saved      map[string]any `json:"saved,omitempty"`
	Data       map[string]any `json:"data,omitempty"`
	// Attachments are the pictures a step took.
	Attachments []string `json:"attachments,omitempty"`
	File        string   `json:"file,omitempty"`
	Line        int      `json:"line,omitempty"`
	Column      int      `json:"column,omitempty"`
}

// millis is a duration written to JSON as float milliseconds with three
// decimals, that is to the microsecond.
type millis time.Duration

// MarshalJSON writes m as a number of milliseconds, such as 12.345.
func (m millis) MarshalJSON() ([]byte, error) {
	d := time.Duration(m).Round(time.Microsecond)
	return strconv.AppendFloat(nil, float64(d)/float64(time.Millisecond), 'f', 3, 64), nil
}

// WriteJSON writes results to w as one indented JSON document:
//
//	{"passed": bool, "sequences": [{"name", "file", "status", "duration_ms",
//	  "error"?, "logs"?, "steps": [{"index", "path", "kind", "name", "group"?,
//	  "status", "started_ms", "duration_ms", "message"?, "expected"?,
//	  "received"?, "saved"?, "data"?, "file"?, "line"?, "column"?}]}]}
//
// Durations and offsets (*_ms) are float milliseconds with three decimals.
// Statuses are the runner's, except that an interrupted step or sequence
// reads "error". "passed" is true when there was at least one sequence and
// every sequence passed. Byte slices in Saved and Data are written as strings
// with non-printable bytes and backslashes escaped (\x1b, \r, \\), which can
// be unescaped to the original bytes; floats that JSON cannot hold (NaN, ±Inf)
// are written as strings. Transcripts are left out: they belong to the log
// files listed under "logs".
func WriteJSON(w io.Writer, results []runner.SequenceResult) error {
	doc := jsonReport{Passed: len(results) > 0, Sequences: make([]jsonSequence, 0, len(results))}
	for i := range results {
		seq := &results[i]
		if seq.Status != runner.Passed {
			doc.Passed = false
		}
		js := jsonSequence{
			Name:       seq.Name,
			File:       seq.File,
			Status:     reportStatus(seq.Status),
			DurationMS: millis(seq.Duration),
			Error:      seq.Error,
			Logs:       seq.Logs,
			Steps:      make([]jsonStep, 0, len(seq.Steps)),
		}
		for j := range seq.Steps {
			s := &seq.Steps[j]
			js.Steps = append(js.Steps, jsonStep{
				Index:       s.Index,
				Path:        s.Path,
				Kind:        s.Kind,
				Name:        s.Name,
				Group:       s.Group,
				Status:      reportStatus(s.Status),
				StartedMS:   millis(s.Started),
				DurationMS:  millis(s.Duration),
				Message:     s.Message,
				Expected:    s.Expected,
				Received:    s.Received,
				Saved:       jsonMap(s.Saved),
				Data:        jsonMap(s.Data),
				Attachments: s.Attachments,
				File:        s.File,
				Line:        s.Line,
				Column:      s.Column,
			})
		}
		doc.Sequences = append(doc.Sequences, js)
	}

	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// The report is read by people and tools, not embedded in HTML: keep
	// "<" and "&" as they are.
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("write json report: %w", err)
	}
	return nil
}

// jsonMap returns m with its values made fit for JSON by jsonValue.
func jsonMap(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = jsonValue(v)
	}
	return out
}

// jsonValue returns v, with byte slices anywhere inside it turned into
// escaped strings and non-finite floats into strings. Values that marshal
// themselves are left alone.
func jsonValue(v any) any {
	switch x := v.(type) {
	case nil, string, bool, int, int64, uint64, json.Marshaler, encoding.TextMarshaler:
		return v
	case []byte:
		return quoteBytes(x)
	case float64:
		return jsonFloat(x)
	case float32:
		return jsonFloat(float64(x))
	case map[string]any:
		return jsonMap(x)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = jsonValue(x[i])
		}
		return out
	}

	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			b := make([]byte, rv.Len())
			reflect.Copy(reflect.ValueOf(b), rv)
			return quoteBytes(b)
		}
		if !needsRewrite(rv.Type().Elem()) {
			return v
		}
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = jsonValue(rv.Index(i).Interface())
		}
		return out
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String || !needsRewrite(rv.Type().Elem()) {
			return v
		}
		out := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			out[it.Key().String()] = jsonValue(it.Value().Interface())
		}
		return out
	}
	return v
}

// needsRewrite reports whether values of type t may hold something jsonValue
// changes.
func needsRewrite(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Interface, reflect.Slice, reflect.Array, reflect.Map, reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

func jsonFloat(f float64) any {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return strconv.FormatFloat(f, 'g', -1, 64)
	}
	return f
}

// Package results holds a run's results on disk and the one rule by which
// every report summarises them.
//
// While a run goes, a Stream writes one JSON line per finished step (and one
// per sequence start and end) to an event file: nothing per step stays in
// memory. Reports (JUnit, JSON, the console's end summary, the MCP result)
// read that file back through a Summarizer, which applies the summary rule:
// a repeat is reported as statistics over its iterations (count, passed,
// failed, min/median/p99/max duration) plus its first failing iterations up
// to a cap, a count of the rest, and its first and last iterations. The
// steps outside repeats are passed on one at a time, so a report can be
// written in memory bounded by the largest single step, however many steps
// ran. The full per-step detail stays in the event file.
package results

import (
	"encoding"
	"encoding/json"
	"math"
	"reflect"
	"strconv"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// Millis is a duration in milliseconds, to the microsecond: JSON writes it
// as a number with three decimals, such as 12.345.
type Millis float64

// MS converts d to Millis, rounded to the microsecond.
func MS(d time.Duration) Millis {
	return Millis(float64(d.Round(time.Microsecond)) / float64(time.Millisecond))
}

// MarshalJSON writes m with three decimals.
func (m Millis) MarshalJSON() ([]byte, error) {
	return strconv.AppendFloat(nil, float64(m.D())/float64(time.Millisecond), 'f', 3, 64), nil
}

// D returns m as a time.Duration.
func (m Millis) D() time.Duration {
	return time.Duration(math.Round(float64(m)*1000)) * time.Microsecond
}

// Step is one finished step as every report shows it: a line of the event
// file, an entry of the JSON report's steps, an entry of the MCP result.
type Step struct {
	StepBase
	// Repeat summarises the iterations of a repeat step, by the summary
	// rule. It is set by a Summarizer, never in the event file.
	Repeat *Repeat `json:"repeat,omitempty"`
}

// StepBase is a Step without the summary of a repeat: what an iteration's
// detail lists. Saved and Data hold only what JSON can carry (see
// JSONValue).
type StepBase struct {
	Index int    `json:"index"`
	Path  string `json:"path"`
	Kind  string `json:"kind"`
	Name  string `json:"name"`
	Group string `json:"group,omitempty"`
	// Branch is the branch of a parallel: step the step ran in.
	Branch string `json:"branch,omitempty"`
	ID     string `json:"id,omitempty"`
	// Tags are a group's tags as -m matches them, and Params a matrix
	// case's values in the order written (runner.StepResult).
	Tags       []string       `json:"tags,omitempty"`
	Params     runner.Params  `json:"params,omitempty"`
	Status     runner.Status  `json:"status"`
	StartedMS  Millis         `json:"started_ms"`
	DurationMS Millis         `json:"duration_ms"`
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
	// Attempt is the attempt of the innermost sequence or group with
	// retries the step ran in, from 1; 0 outside any.
	Attempt int `json:"attempt,omitempty"`
	// Attempts are a group's attempts, when it has retries; Flaky says
	// one did not pass and the last did.
	Attempts []Attempt `json:"attempts,omitempty"`
	Flaky    bool      `json:"flaky,omitempty"`
	// Measurement is what a measure step measured.
	Measurement *runner.Measurement `json:"measurement,omitempty"`
}

// IsContainer reports whether s is a group, a repeat, a parallel or a
// branch, which finishes after the steps it contains.
func (s *StepBase) IsContainer() bool { return steps.IsContainer(steps.Kind(s.Kind)) }

// StepFrom converts a runner result, making Saved and Data fit for JSON.
func StepFrom(r *runner.StepResult) Step {
	return Step{StepBase: StepBase{
		Index: r.Index, Path: r.Path, Kind: r.Kind, Name: r.Name, Group: r.Group, Branch: r.Branch, ID: r.ID,
		Tags: r.Tags, Params: r.Params, Status: r.Status, StartedMS: MS(r.Started), DurationMS: MS(r.Duration),
		Message: r.Message, Expected: r.Expected, Received: r.Received,
		Saved: JSONMap(r.Saved), Data: JSONMap(r.Data), Attachments: r.Attachments,
		File: r.File, Line: r.Line, Column: r.Column,
		Attempt: r.Attempt, Attempts: attemptsFrom(r.Attempts), Flaky: r.Flaky,
		Measurement: r.Measurement,
	}}
}

// Transcript is what one console printed during a sequence, up to the
// runner's bound; Truncated counts the bytes dropped from its start.
type Transcript struct {
	Console   string `json:"console"`
	Data      []byte `json:"data"`
	Truncated int64  `json:"truncated,omitempty"`
}

// Sequence is the outcome of one sequence file without its steps.
type Sequence struct {
	Name string `json:"name"`
	File string `json:"file"`
	// Bench names the bench of a pool that ran the sequence; "" outside
	// a pool.
	Bench  string        `json:"bench,omitempty"`
	Status runner.Status `json:"status"`
	// StepsWritten counts the steps as written in the sequence's file; 0
	// in event files older than the count.
	StepsWritten int               `json:"steps_written,omitempty"`
	StartedAt    time.Time         `json:"started_at"`
	DurationMS   Millis            `json:"duration_ms"`
	Error        string            `json:"error,omitempty"`
	Logs         map[string]string `json:"logs,omitempty"`
	// Transcripts are the consoles' transcripts, for JUnit's system-out.
	Transcripts []Transcript `json:"transcripts,omitempty"`
	// Attempts are the sequence's attempts, when it has retries; Flaky
	// says one did not pass and the last did.
	Attempts []Attempt `json:"attempts,omitempty"`
	Flaky    bool      `json:"flaky,omitempty"`
	// Tags are the sequence's own tags.
	Tags []string `json:"tags,omitempty"`
}

// SequenceFrom converts a runner result; its Steps are left out.
func SequenceFrom(r *runner.SequenceResult) Sequence {
	s := Sequence{
		Name: r.Name, File: r.File, Bench: r.Bench, Status: r.Status, StepsWritten: r.StepsWritten, StartedAt: r.StartedAt,
		DurationMS: MS(r.Duration), Error: r.Error, Logs: r.Logs,
		Attempts: attemptsFrom(r.Attempts), Flaky: r.Flaky, Tags: r.Tags,
	}
	for _, t := range r.Transcripts {
		s.Transcripts = append(s.Transcripts, Transcript{Console: t.Console, Data: t.Data, Truncated: t.Truncated})
	}
	return s
}

// Record types of the event file.
const (
	// RecordStart opens a sequence: Sequence holds its name, file and start.
	RecordStart = "start"
	// RecordStep is a finished step.
	RecordStep = "step"
	// RecordEnd closes a sequence: Sequence holds its outcome.
	RecordEnd = "end"
)

// Record is one line of the event file.
type Record struct {
	Type string `json:"type"`
	// Seq numbers the sequences of the run from 0.
	Seq      int       `json:"seq"`
	Step     *Step     `json:"step,omitempty"`
	Sequence *Sequence `json:"sequence,omitempty"`
	Attempt  *Attempt  `json:"attempt,omitempty"`
	// Recovery and BadBench are a bench's records (recovery.go).
	Recovery *Recovery `json:"recovery,omitempty"`
	BadBench *BadBench `json:"bad_bench,omitempty"`
}

// JSONMap returns m with its values made fit for JSON by JSONValue; nil
// when m is empty.
func JSONMap(m map[string]any) map[string]any {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = JSONValue(v)
	}
	return out
}

// JSONValue returns v, with byte slices anywhere inside it turned into
// escaped strings (QuoteBytes) and non-finite floats into strings. Values
// that marshal themselves are left alone.
func JSONValue(v any) any {
	switch x := v.(type) {
	case nil, string, bool, int, int64, uint64, json.Number, json.Marshaler, encoding.TextMarshaler:
		return v
	case []byte:
		return QuoteBytes(x)
	case float64:
		return jsonFloat(x)
	case float32:
		return jsonFloat(float64(x))
	case map[string]any:
		return JSONMap(x)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = JSONValue(x[i])
		}
		return out
	}

	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		if rv.Type().Elem().Kind() == reflect.Uint8 {
			b := make([]byte, rv.Len())
			reflect.Copy(reflect.ValueOf(b), rv)
			return QuoteBytes(b)
		}
		if !needsRewrite(rv.Type().Elem()) {
			return v
		}
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = JSONValue(rv.Index(i).Interface())
		}
		return out
	case reflect.Map:
		if rv.Type().Key().Kind() != reflect.String || !needsRewrite(rv.Type().Elem()) {
			return v
		}
		out := make(map[string]any, rv.Len())
		for it := rv.MapRange(); it.Next(); {
			out[it.Key().String()] = JSONValue(it.Value().Interface())
		}
		return out
	}
	return v
}

// needsRewrite reports whether values of type t may hold something JSONValue
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

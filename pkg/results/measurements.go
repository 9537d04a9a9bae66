package results

import (
	"strconv"
	"strings"

	"github.com/hilrun/hilrun/pkg/runner"
)

// MaxMeasureNames bounds the measurement names a repeat summarises; the
// measurements of names beyond it are counted, not summarised.
const MaxMeasureNames = 64

// MeasureStats summarises the values of one measurement over the
// iterations of a repeat. Min, Median, P99 and Max are over its numbers
// (nil when it measured none); Median and P99 are exact when
// QuantilesExact, else within 1% (see values).
type MeasureStats struct {
	Name string `json:"name"`
	Unit string `json:"unit,omitempty"`
	// Limits are those of the last value measured.
	LimitMin *float64 `json:"limit_min,omitempty"`
	LimitMax *float64 `json:"limit_max,omitempty"`
	Equals   any      `json:"equals,omitempty"`
	Regex    string   `json:"regex,omitempty"`
	// Count counts the values; Passed and Failed by their outcome.
	Count  int `json:"count"`
	Passed int `json:"passed"`
	Failed int `json:"failed"`
	// Numbers counts the values that were numbers.
	Numbers        int      `json:"numbers"`
	Min            *float64 `json:"min,omitempty"`
	Median         *float64 `json:"median,omitempty"`
	P99            *float64 `json:"p99,omitempty"`
	Max            *float64 `json:"max,omitempty"`
	QuantilesExact bool     `json:"quantiles_exact"`
	// Last is the last value measured.
	Last any `json:"last,omitempty"`
}

// Text is the statistics in one line, as the console and JUnit show
// them: "vbat: 10 values, all within [3.0, 3.6] V; min 3.3 V, median
// 3.31 V, p99 3.35 V, max 3.35 V".
func (m *MeasureStats) Text() string {
	var b strings.Builder
	b.WriteString(m.Name + ": " + plural(m.Count, "value"))
	limits, isRange := m.LimitsText(), m.LimitMin != nil && m.LimitMax != nil
	switch {
	case m.Failed > 0 && isRange:
		b.WriteString(", " + strconv.Itoa(m.Failed) + " outside " + limits)
	case m.Failed > 0:
		b.WriteString(", " + strconv.Itoa(m.Failed) + " failed " + limits)
	case isRange:
		b.WriteString(", all within " + limits)
	case limits != "":
		b.WriteString(", all " + limits)
	}
	if m.Numbers > 0 {
		u := func(f *float64) string { return withUnit(runner.FormatNumber(*f), m.Unit) }
		b.WriteString("; min " + u(m.Min) + ", median " + u(m.Median) + ", p99 " + u(m.P99) + ", max " + u(m.Max))
		if !m.QuantilesExact {
			b.WriteString(" (median and p99 within 1%)")
		}
	}
	return b.String()
}

// LimitsText writes the limits as the steps' messages do: "[3.0, 3.6]
// V", "≥ 3 V", "= 7", "~ ^v"; "" for none.
func (m *MeasureStats) LimitsText() string {
	f := runner.FormatNumber
	switch {
	case m.LimitMin != nil && m.LimitMax != nil:
		return withUnit("["+f(*m.LimitMin)+", "+f(*m.LimitMax)+"]", m.Unit)
	case m.LimitMin != nil:
		return "≥ " + withUnit(f(*m.LimitMin), m.Unit)
	case m.LimitMax != nil:
		return "≤ " + withUnit(f(*m.LimitMax), m.Unit)
	case m.Equals != nil:
		return "= " + withUnit(runner.FormatMeasured(m.Equals), m.Unit)
	case m.Regex != "":
		return "~ " + m.Regex
	}
	return ""
}

func withUnit(text, unit string) string {
	if unit == "" {
		return text
	}
	return text + " " + unit
}

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// measureAgg gathers the measurements of a repeat by name, in memory
// bounded by MaxMeasureNames and the bound of values.
type measureAgg struct {
	byName map[string]*measureOne
	order  []string
	more   int
}

type measureOne struct {
	stats MeasureStats
	vals  values
}

func (a *measureAgg) add(m *runner.Measurement) {
	one := a.byName[m.Name]
	if one == nil {
		if len(a.order) >= MaxMeasureNames {
			a.more++
			return
		}
		if a.byName == nil {
			a.byName = map[string]*measureOne{}
		}
		one = &measureOne{stats: MeasureStats{Name: m.Name}}
		a.byName[m.Name] = one
		a.order = append(a.order, m.Name)
	}
	s := &one.stats
	s.Unit, s.LimitMin, s.LimitMax, s.Equals, s.Regex, s.Last = m.Unit, m.Min, m.Max, m.Equals, m.Regex, m.Value
	s.Count++
	if m.Outcome == runner.Passed {
		s.Passed++
	} else {
		s.Failed++
	}
	if f, ok := MeasuredNumber(m.Value); ok {
		s.Numbers++
		one.vals.add(f)
	}
}

// finish returns the statistics of every name, and the count of
// measurements left out.
func (a *measureAgg) finish() ([]MeasureStats, int) {
	var out []MeasureStats
	for _, name := range a.order {
		one := a.byName[name]
		s := one.stats
		if v := &one.vals; v.n > 0 {
			lo, hi, med, p99 := v.min, v.max, v.quantile(0.5), v.quantile(0.99)
			s.Min, s.Max, s.Median, s.P99 = &lo, &hi, &med, &p99
		}
		s.QuantilesExact = !one.vals.spilled
		out = append(out, s)
	}
	return out, a.more
}

// MeasuredNumber is a measured value as a number, false when it is text
// or a boolean.
func MeasuredNumber(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case interface{ Float64() (float64, error) }:
		f, err := x.Float64()
		return f, err == nil
	}
	return 0, false
}

// MaxListedMeasurements bounds the measurements a report lists one by
// one per sequence (the JSON report's measurements); past it they are
// counted, and the --measurements CSV and the event file still hold
// every one.
const MaxListedMeasurements = 10_000

// MeasureRecord is one measurement where it was made: an entry of the
// JSON report's measurements and a row of the --measurements CSV.
type MeasureRecord struct {
	Name  string `json:"name"`
	Value any    `json:"value"`
	Unit  string `json:"unit,omitempty"`
	// Min, Max, Equals and Regex are the limits, as in
	// runner.Measurement.
	Min     *float64      `json:"min,omitempty"`
	Max     *float64      `json:"max,omitempty"`
	Equals  any           `json:"equals,omitempty"`
	Regex   string        `json:"regex,omitempty"`
	Outcome runner.Status `json:"outcome"`
	// Step is the path of the step that measured ("2", "3#41.0"), and
	// StepName its name.
	Step     string `json:"step"`
	StepName string `json:"step_name,omitempty"`
	// Iteration is the iteration of the innermost repeat the step is
	// in; nil outside repeats.
	Iteration *int   `json:"iteration,omitempty"`
	StartedMS Millis `json:"started_ms"`
}

// MeasureRecordOf is the measurement of step st, false when it has none.
func MeasureRecordOf(st *Step) (MeasureRecord, bool) {
	m := st.Measurement
	if m == nil {
		return MeasureRecord{}, false
	}
	r := MeasureRecord{Name: m.Name, Value: m.Value, Unit: m.Unit, Min: m.Min, Max: m.Max, Equals: m.Equals, Regex: m.Regex,
		Outcome: m.Outcome, Step: st.Path, StepName: st.Name, StartedMS: st.StartedMS}
	if chain := repeatChain(st.Path); len(chain) > 0 {
		it := chain[len(chain)-1].iteration
		r.Iteration = &it
	}
	return r, true
}

package report

import (
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// measureSeries gathers the measurements of a sequence for the page's
// table and plots, iterations included: per name (up to htmlSeries),
// counts, the range of its numbers and up to htmlSeriesPoints of them in
// the order measured (past it every other point is dropped and the
// stride doubles, as for memory plots).
type measureSeries struct {
	byName map[string]*measureLine
	order  []string
}

// measureLine is one measurement name's line of the table and its plot:
// Points are [ordinal, value], the ordinal counting the measurement's
// values from 0.
type measureLine struct {
	Name     string   `json:"name"`
	Unit     string   `json:"unit,omitempty"`
	LimitMin *float64 `json:"limit_min,omitempty"`
	LimitMax *float64 `json:"limit_max,omitempty"`
	Limits   string   `json:"limits,omitempty"`
	Count    int      `json:"count"`
	Passed   int      `json:"passed"`
	Failed   int      `json:"failed"`
	Last     string   `json:"last"`
	seriesAgg
}

func (m *measureSeries) add(st *results.Step) {
	ms := st.Measurement
	if ms == nil {
		return
	}
	row := m.byName[ms.Name]
	if row == nil {
		if len(m.order) >= htmlSeries {
			return
		}
		if m.byName == nil {
			m.byName = map[string]*measureLine{}
		}
		row = &measureLine{Name: ms.Name, seriesAgg: seriesAgg{Address: ms.Name, Kind: "measure", stride: 1}}
		m.byName[ms.Name] = row
		m.order = append(m.order, ms.Name)
	}
	row.Unit, row.LimitMin, row.LimitMax, row.Last = ms.Unit, ms.Min, ms.Max, runner.FormatMeasured(ms.Value)
	stats := results.MeasureStats{Unit: ms.Unit, LimitMin: ms.Min, LimitMax: ms.Max, Equals: ms.Equals, Regex: ms.Regex}
	row.Limits = stats.LimitsText()
	row.Count++
	if ms.Outcome == runner.Passed {
		row.Passed++
	} else {
		row.Failed++
	}
	if f, ok := results.MeasuredNumber(ms.Value); ok {
		row.add(results.Millis(row.N), f)
	}
}

// rows are the table's rows, in the order first measured.
func (m *measureSeries) rows() []*measureLine {
	out := make([]*measureLine, 0, len(m.order))
	for _, name := range m.order {
		r := m.byName[name]
		r.Stride = r.stride
		out = append(out, r)
	}
	return out
}

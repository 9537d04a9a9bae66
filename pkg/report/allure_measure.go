package report

import (
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// allureMeasureParams are the parameters a step's measurements give its
// Allure step: the measured value with its unit and outcome, or for a
// repeat each measurement's statistics.
func allureMeasureParams(st *results.Step) []allureParameter {
	var out []allureParameter
	if m := st.Measurement; m != nil {
		v := runner.FormatMeasured(m.Value)
		if m.Unit != "" {
			v += " " + m.Unit
		}
		out = append(out, allureParameter{Name: cleanLine(m.Name), Value: cleanLine(v + " (" + string(m.Outcome) + ")")})
	}
	if r := st.Repeat; r != nil {
		for i := range r.Measurements {
			s := &r.Measurements[i]
			out = append(out, allureParameter{Name: cleanLine(s.Name), Value: cleanLine(s.Text())})
		}
	}
	return out
}

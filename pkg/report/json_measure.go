package report

import "github.com/hilrun/hilrun/pkg/results"

// measureList gathers the measurements of one sequence for the JSON
// report, iterations included, up to results.MaxListedMeasurements.
type measureList struct {
	list    []results.MeasureRecord
	leftOut int
}

func (l *measureList) add(st *results.Step) {
	r, ok := results.MeasureRecordOf(st)
	if !ok {
		return
	}
	if len(l.list) >= results.MaxListedMeasurements {
		l.leftOut++
		return
	}
	l.list = append(l.list, r)
}

// write appends the sequence's "measurements" (and
// "measurements_left_out") to its object, nothing when it measured
// nothing, and empties l.
func (l *measureList) write(jw *jsonWriter) {
	if len(l.list) > 0 {
		jw.printf(",\n      \"measurements\": [")
		for i := range l.list {
			if i > 0 {
				jw.printf(",")
			}
			jw.printf("\n        %s", jw.marshal(&l.list[i], "        "))
		}
		jw.printf("\n      ]")
	}
	if l.leftOut > 0 {
		jw.printf(",\n      \"measurements_left_out\": %d", l.leftOut)
	}
	*l = measureList{}
}

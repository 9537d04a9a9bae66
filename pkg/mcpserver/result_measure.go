package mcpserver

import "github.com/hilrun/hilrun/pkg/results"

// resultMeasures gathers the measurements a sequence result lists, up to
// maxResultSteps.
type resultMeasures struct {
	list    []results.MeasureRecord
	leftOut int
}

func (m *resultMeasures) add(st *results.Step) {
	r, ok := results.MeasureRecordOf(st)
	if !ok {
		return
	}
	if len(m.list) >= maxResultSteps {
		m.leftOut++
		return
	}
	m.list = append(m.list, r)
}

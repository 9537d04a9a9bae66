package report

import (
	"fmt"

	"github.com/hilrun/hilrun/pkg/results"
)

// measureLines prints the statistics of each measurement of a finished
// repeat under its line, red for one that went outside its limits.
func (c *Console) measureLines(indent string, r *results.Repeat) {
	for i := range r.Measurements {
		m := &r.Measurements[i]
		colour := ansiDim
		if m.Failed > 0 {
			colour = ansiRed
		}
		fmt.Fprintf(&c.buf, "%s%s\n", indent, c.paint(colour, cleanLine(m.Text())))
	}
	if r.MoreMeasurements > 0 {
		fmt.Fprintf(&c.buf, "%s%s\n", indent, c.paint(ansiDim, fmt.Sprintf("and %d more measurements of names past the first %d: the event stream has them", r.MoreMeasurements, results.MaxMeasureNames)))
	}
}

package report

import (
	"strings"

	"github.com/hilrun/hilrun/pkg/results"
)

// caseProps adds the properties of the case that top ends: "tags" (its
// tags as -m matches them, comma-separated) and, for a matrix case,
// "param.KEY" for each of its values, keys in the order written.
func (cb *caseBuilder) caseProps(top *results.Step) {
	if len(top.Tags) > 0 {
		cb.prop("tags", cleanLine(strings.Join(top.Tags, ",")))
	}
	for _, p := range top.Params {
		cb.prop("param."+p.Key, csvScalar(p.Value))
	}
}

package report

import (
	"fmt"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// allureAttempts adds to n, the step of a group with retries, its
// attempts: a parameter that counts them, a step per attempt that did
// not pass with its message and console output, and for a flaky group
// Allure's own flaky mark.
func (a *allureWriter) allureAttempts(n *allureStep, st *results.Step) {
	if st.Attempt > 0 {
		n.Name = fmt.Sprintf("attempt %d: %s", st.Attempt, n.Name)
	}
	if len(st.Attempts) == 0 {
		return
	}
	last := st.Attempts[len(st.Attempts)-1]
	n.Parameters = append(n.Parameters, allureParameter{Name: "attempts", Value: fmt.Sprintf("%d of %d", last.Attempt, last.Of)})
	for _, at := range results.Failed(st.Attempts) {
		start := a.seq.seq.StartedAt.Add(at.StartedMS.D())
		s := &allureStep{Name: at.Label(), Status: allureStatus(at.Status), Stage: "finished",
			Start: start.UnixMilli(), Stop: start.Add(at.DurationMS.D()).UnixMilli(),
			StatusDetails: &allureDetails{Message: cleanText(at.Message), Trace: cleanText(at.Output)},
			Steps:         []*allureStep{}, Attachments: []allureAttach{}}
		n.Steps = append(n.Steps, s)
	}
	if st.Flaky && st.Status == runner.Passed {
		n.StatusDetails = &allureDetails{Message: "flaky: passed on " + last.Label(), Flaky: true}
	}
}

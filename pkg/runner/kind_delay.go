package runner

import (
	"context"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
)

func init() { leafRunners[steps.KindDelay] = (*run).delay }

// delay waits s.Delay. Right after a send that expects nothing it counts
// from the end of that send's write, not from its own start, so the step
// bookkeeping between the two does not lengthen the gap the device sees
// between the writes (a sender that writes then sleeps counts the same).
func (r *run) delay(ctx context.Context, s *steps.Step, res *StepResult) error {
	start := time.Now()
	if !r.wrote.IsZero() {
		start, r.wrote = r.wrote, time.Time{}
	}
	err := r.sleepTimed(ctx, start.Add(s.Delay))
	actual := time.Since(start)
	res.Data = map[string]any{
		"requested_us": s.Delay.Microseconds(),
		"actual_us":    actual.Microseconds(),
	}
	return err
}

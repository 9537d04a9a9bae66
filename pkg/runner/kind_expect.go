package runner

import (
	"context"

	"github.com/hilrun/hilrun/pkg/steps"
)

func init() { leafRunners[steps.KindExpect] = (*run).expectStep }

// expectStep waits on the step's console, from where the last step left
// it, for one of the step's patterns.
func (r *run) expectStep(ctx context.Context, s *steps.Step, res *StepResult) error {
	c, err := r.console(s.To)
	if err != nil {
		return err
	}
	return r.expect(ctx, s, res, c, r.cursor[s.To], false)
}

package runner

import (
	"context"
	"fmt"

	"github.com/hilrun/hilrun/pkg/steps"
)

func init() { leafRunners[steps.KindLog] = (*run).log }

// log writes its line into the reports: the step's result is named by the
// expanded line (after the step's name, when it has one), so every report
// shows it at this point of the run.
func (r *run) log(_ context.Context, s *steps.Step, res *StepResult) error {
	a, ok := s.Args.(*steps.LogArgs)
	if !ok {
		return fmt.Errorf("log step without its text")
	}
	text, err := r.expand("log", a.Text)
	if err != nil {
		return err
	}
	res.Message = text
	res.Name = text
	if s.Name != "" {
		res.Name = s.Name + ": " + text
	}
	return nil
}

package runner

import (
	"context"
	"fmt"

	"github.com/hilrun/hilrun/pkg/steps"
)

func init() { leafRunners[steps.KindSet] = (*run).set }

// set gives each variable of the step its value, in order, so a later
// assignment reads an earlier one; the values are the step's saved ones.
func (r *run) set(ctx context.Context, s *steps.Step, res *StepResult) error {
	res.Saved = map[string]any{}
	for _, a := range s.Set {
		var v any
		switch {
		case a.Text != nil:
			t, err := r.expand("set "+a.Name, a.Text)
			if err != nil {
				return err
			}
			v = t
		case a.Expr != nil:
			out, err := r.eval(ctx, fmt.Sprintf("set %s = %s", a.Name, a.Expr.Src), a.Expr, nil)
			if err != nil {
				return err
			}
			v = out
		default:
			v = a.Value
		}
		if err := r.setVar("set", a.Name, v); err != nil {
			return err
		}
		res.Saved[a.Name] = v
	}
	return nil
}

package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hilrun/hilrun/pkg/steps"
)

func init() { leafRunners[steps.KindAssert] = (*run).assert }

// assert evaluates the step's expression: false fails the step, with its
// message and the values of the variables the expression reads.
func (r *run) assert(ctx context.Context, s *steps.Step, res *StepResult) error {
	out, err := r.eval(ctx, "assert "+s.Assert.Src, s.Assert, nil)
	values := r.describeNames(s.Assert.Names)
	if se := (*stepError)(nil); errors.As(err, &se) {
		se.expected, se.received = s.Assert.Src, values
	}
	if err != nil {
		return err
	}
	ok, isBool := out.(bool)
	if !isBool {
		return &stepError{msg: fmt.Sprintf("assert %s gave %v, not true or false", s.Assert.Src, out), expected: s.Assert.Src, received: values}
	}
	if !ok {
		msg := "assert failed: " + s.Assert.Src
		if m, err := r.assertMessage(ctx, s); err != nil {
			msg += " (its message: " + err.Error() + ")"
		} else if m != "" {
			msg = m + " (" + s.Assert.Src + ")"
		}
		if values != "" {
			msg += " with " + values
		}
		return &stepError{msg: msg, expected: s.Assert.Src, received: values}
	}
	res.Message = "true"
	return nil
}

// assertMessage is what failed assert s says: its message: text with the
// variables filled in, or its {expr: ...} evaluated; "" when it has none.
func (r *run) assertMessage(ctx context.Context, s *steps.Step) (string, error) {
	switch {
	case s.MessageExpr != nil:
		out, err := r.eval(ctx, "message "+s.MessageExpr.Src, s.MessageExpr, nil)
		if err != nil {
			return "", err
		}
		return fmt.Sprint(out), nil
	case s.MessageText != nil:
		return r.expand("message", s.MessageText)
	}
	return "", nil
}

// describeNames shows the values of the variables an expression reads.
func (r *run) describeNames(names []string) string {
	var parts []string
	for _, n := range names {
		v, ok := r.vars[n]
		switch {
		case !ok:
			parts = append(parts, n+" undefined")
		case isText(v):
			parts = append(parts, fmt.Sprintf("%s=%q", n, v))
		default:
			parts = append(parts, fmt.Sprintf("%s=%v", n, v))
		}
	}
	return strings.Join(parts, ", ")
}

func isText(v any) bool {
	_, ok := v.(string)
	return ok
}

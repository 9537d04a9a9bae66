package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/hilrun/hilrun/pkg/steps"
)

// eval runs an expression of step what under the run's expression budgets
// and ctx, the step's context. value, when not nil, is the expression's
// value variable. A budget that runs out, or the step's end, is the step's
// error; an expression that fails otherwise is its failure (a
// *stepError).
func (r *run) eval(ctx context.Context, what string, x *steps.Expr, value any) (any, error) {
	env := steps.ExprEnv(r.vars, r.stepRes, r.exprEnviron())
	if value != nil {
		env["value"] = value
	}
	out, err := x.Eval(ctx, env, steps.ExprLimits{
		// Text up to a few times the value limit, so s + s works for any
		// value within it.
		Text:   4 * r.maxValue(),
		Work:   r.opts.MaxExprWork,
		Memory: r.opts.MaxExprMemory,
	})
	if err == nil {
		return out, nil
	}
	msg := fmt.Sprintf("%s: %s", what, firstLine(err.Error()))
	for _, l := range []struct {
		err  error
		flag string
	}{{steps.ErrExprBudget, "--max-value"}, {steps.ErrExprWork, "--max-expr-work"}, {steps.ErrExprMemory, "--max-expr-memory"}} {
		if errors.Is(err, l.err) {
			return nil, &budgetError{msg: fmt.Sprintf("%s (%s raises it)", msg, l.flag), err: err}
		}
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("%s: %w", what, context.Cause(ctx))
	}
	return nil, &stepError{msg: msg}
}

// exprEnviron is env in expressions and ${env.NAME}: the bench's
// environment, made into a map once per run. A bench with no environment
// (the MCP server's) leaves it empty, so expressions cannot list the
// names either. A later line for a name wins, as it does for a process.
// A variable that holds a secret's value is left out.
func (r *run) exprEnviron() map[string]string {
	r.environOnce.Do(func() {
		r.environ = map[string]string{}
		for _, kv := range r.bench.Environ {
			if k, v, ok := strings.Cut(kv, "="); ok && v != "" && !r.opts.Secrets.Contains(v) {
				r.environ[k] = v
			}
		}
	})
	return r.environ
}

// budgetError is the error of a step whose expression ran out of a
// budget; it wraps the steps.ErrExpr* error.
type budgetError struct {
	msg string
	err error
}

func (e *budgetError) Error() string { return e.msg }
func (e *budgetError) Unwrap() error { return e.err }

// firstLine is s up to its first line break.
func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

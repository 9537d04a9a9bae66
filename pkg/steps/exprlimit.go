package steps

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/vm/runtime"
)

// Expressions can build text: s + s, repeat(s, n), join(list) and more,
// inside map and reduce loops too. expr-lang bounds the lists it makes
// (a memory budget) but not the text, so the loader rewrites every
// operation that builds text into a call of guardFunc, which charges the
// evaluation's ExprBudget before the text is made.

// ExprBudgetVar is the name under which the environment of one
// evaluation carries its *ExprBudget (see WithExprBudget).
const ExprBudgetVar = "__hilrun_budget"

const guardFunc = "__hilrun_guard"

// DefaultExprBudget is the text one evaluation may build when its
// environment carries no budget.
const DefaultExprBudget = 4 << 20

// ErrExprBudget is the error of an expression that would build more text
// than its budget.
var ErrExprBudget = errors.New("expression text budget")

// ExprBudget is how many bytes of text one evaluation of an expression may
// still build. It is not safe for concurrent use: give each evaluation its
// own.
type ExprBudget struct {
	Max, left int
}

// WithExprBudget puts a budget of max bytes into env, for one evaluation.
func WithExprBudget(env map[string]any, max int) map[string]any {
	env[ExprBudgetVar] = &ExprBudget{Max: max, left: max}
	return env
}

func (b *ExprBudget) take(op string, n int) error {
	if n > b.left {
		return fmt.Errorf("%s would make %d bytes of text, after %d already made: past the %w of %d bytes for one evaluation", op, n, b.Max-b.left, ErrExprBudget, b.Max)
	}
	b.left -= n
	return nil
}

// guarded are the builtins that build text whose size their arguments do
// not bound.
var guarded = map[string]bool{"repeat": true, "replace": true, "join": true, "toJSON": true, "string": true}

// textGuard is the expr.Patch visitor that routes text-building operations
// through guardFunc.
type textGuard struct{}

func (textGuard) Visit(node *ast.Node) {
	call := func(op string, args ...ast.Node) {
		all := append([]ast.Node{&ast.StringNode{Value: op}, &ast.IdentifierNode{Value: ExprBudgetVar}}, args...)
		ast.Patch(node, &ast.CallNode{Callee: &ast.IdentifierNode{Value: guardFunc}, Arguments: all})
	}
	switch n := (*node).(type) {
	case *ast.BinaryNode:
		if n.Operator == "+" {
			call("+", n.Left, n.Right)
		}
	case *ast.BuiltinNode:
		if guarded[n.Name] {
			call(n.Name, n.Arguments...)
		}
	}
}

// exprOptions are the options every expression compiles with.
func exprOptions() []expr.Option {
	return []expr.Option{
		expr.Function(guardFunc, guard),
		expr.Patch(textGuard{}),
	}
}

// guard runs op (+ or a guarded builtin) after charging the budget with
// the most text it can make.
func guard(args ...any) (any, error) {
	op := args[0].(string)
	b, _ := args[1].(*ExprBudget)
	if b == nil {
		b = &ExprBudget{Max: DefaultExprBudget, left: DefaultExprBudget}
	}
	args = args[2:]
	if op == "+" {
		if len(args) != 2 {
			return nil, fmt.Errorf("+ takes two values")
		}
		l, lok := args[0].(string)
		r, rok := args[1].(string)
		if lok && rok {
			if err := b.take("+", len(l)+len(r)); err != nil {
				return nil, err
			}
			return l + r, nil
		}
		return runtime.Add(args[0], args[1]), nil
	}
	if err := b.take(op, textBound(op, args, b.left)); err != nil {
		return nil, err
	}
	fn := builtin.Builtins[builtin.Index[op]]
	switch {
	case fn.Fast != nil && len(args) == 1:
		return fn.Fast(args[0]), nil
	case fn.Func != nil:
		return fn.Func(args...)
	case fn.Safe != nil:
		out, _, err := fn.Safe(args...)
		return out, err
	}
	return nil, fmt.Errorf("%s: cannot be called here", op)
}

// textBound is the most text op can make from args; it stops counting
// past limit.
func textBound(op string, args []any, limit int) int {
	switch op {
	case "repeat":
		s, _ := args[0].(string)
		n, ok := toInt(args[1])
		if !ok || n <= 0 || len(s) == 0 {
			return 0
		}
		if len(s) > (limit+1)/n+1 {
			return limit + 1
		}
		return len(s) * n
	case "replace":
		if len(args) < 3 {
			return 0
		}
		s, _ := args[0].(string)
		old, _ := args[1].(string)
		repl, _ := args[2].(string)
		n := strings.Count(s, old)
		if old == "" {
			n = utf8.RuneCountInString(s) + 1
		}
		if len(args) == 4 {
			if m, ok := toInt(args[3]); ok && m >= 0 && m < n {
				n = m
			}
		}
		grow := len(repl) - len(old)
		if grow <= 0 {
			return len(s)
		}
		if n > 0 && grow > (limit+1)/n+1 {
			return limit + 1
		}
		return len(s) + n*grow
	case "join":
		glue := ""
		if len(args) == 2 {
			glue, _ = args[1].(string)
		}
		return textSize(args[0], len(glue), limit)
	case "toJSON":
		// Escapes write a byte as up to 6, and indents add to each item.
		return 6 * textSize(args[0], 16, limit/6+1)
	default: // string
		return textSize(args[0], 2, limit)
	}
}

func toInt(v any) (int, bool) {
	switch v := v.(type) {
	case int:
		return v, true
	case int64:
		return int(v), true
	case uint64:
		return int(min(v, 1<<62)), true
	case float64:
		return int(min(v, 1<<62)), true
	}
	return 0, false
}

// textSize estimates the text v makes when written out: its strings, 32
// bytes per other value, and sep bytes between items. It stops counting
// past limit.
func textSize(v any, sep, limit int) int {
	switch v := v.(type) {
	case string:
		return len(v)
	case []byte:
		return len(v)
	case nil, bool, int, int64, uint64, float64:
		return 32
	}
	rv := reflect.ValueOf(v)
	n := 0
	switch rv.Kind() {
	case reflect.Slice, reflect.Array:
		for i := 0; i < rv.Len() && n <= limit; i++ {
			n += sep + textSize(rv.Index(i).Interface(), sep, limit)
		}
	case reflect.Map:
		it := rv.MapRange()
		for it.Next() && n <= limit {
			n += sep + textSize(it.Key().Interface(), sep, limit) + textSize(it.Value().Interface(), sep, limit)
		}
	default:
		n = 32
	}
	return n
}

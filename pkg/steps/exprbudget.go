package steps

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
)

// Expressions come from sequence files and MCP clients, so one evaluation
// must end soon and hold little memory whatever it says. expr-lang counts
// neither work nor time, so the loader routes what loops or allocates
// through guard functions (see exprlimit.go) that charge the evaluation's
// exprBudget: work for each element a loop or a builtin goes through,
// memory for each list or map cell made, text for each byte of text made.
// Each charge also checks the step's context.

// Default budgets of one evaluation, used where ExprLimits leaves a field 0.
const (
	// DefaultExprWork is the operations one evaluation may do: an element
	// a loop or a builtin goes through, or 64 bytes of text one scans.
	DefaultExprWork = 1_000_000
	// DefaultExprMemory is the bytes of lists and maps one evaluation may
	// make, at 16 bytes a cell.
	DefaultExprMemory = 16 << 20
	// DefaultExprText is the bytes of text one evaluation may make.
	DefaultExprText = 4 << 20
)

// cellBytes is what one list cell or map entry counts against the memory
// budget: the size of an interface value.
const cellBytes = 16

// Errors of an evaluation that ran out of a budget.
var (
	// ErrExprBudget: the expression would build more text than its
	// text budget.
	ErrExprBudget = errors.New("expression text budget")
	// ErrExprWork: the expression would do more operations than its work
	// budget.
	ErrExprWork = errors.New("expression work budget")
	// ErrExprMemory: the expression would make more lists and maps than
	// its memory budget.
	ErrExprMemory = errors.New("expression memory budget")
)

// ExprLimits bound one evaluation of an expression; 0 means the default.
type ExprLimits struct {
	Text   int // bytes of text made (DefaultExprText)
	Work   int // operations (DefaultExprWork)
	Memory int // bytes of list and map cells made (DefaultExprMemory)
}

func (l ExprLimits) orDefaults() ExprLimits {
	if l.Text <= 0 {
		l.Text = DefaultExprText
	}
	if l.Work <= 0 {
		l.Work = DefaultExprWork
	}
	if l.Memory <= 0 {
		l.Memory = DefaultExprMemory
	}
	return l
}

// exprBudget is what one evaluation may still do. It is not safe for
// concurrent use: each evaluation has its own.
type exprBudget struct {
	ctx                context.Context
	max                ExprLimits
	work, memory, text int // used so far
}

func newExprBudget(ctx context.Context, l ExprLimits) *exprBudget {
	return &exprBudget{ctx: ctx, max: l.orDefaults()}
}

// stopped is the error of an evaluation whose step ended (timeout or
// cancellation) while it ran.
func (b *exprBudget) stopped() error {
	if b.ctx == nil || b.ctx.Err() == nil {
		return nil
	}
	return fmt.Errorf("the expression was stopped: %w", context.Cause(b.ctx))
}

// takeWork charges n operations for op and checks the context.
func (b *exprBudget) takeWork(op string, n int) error {
	if err := b.stopped(); err != nil {
		return err
	}
	if n > b.max.Work-b.work {
		return fmt.Errorf("%s would pass the %w of %d operations for one evaluation", op, ErrExprWork, b.max.Work)
	}
	b.work += n
	return nil
}

// takeCells charges n list or map cells for op.
func (b *exprBudget) takeCells(op string, n int) error {
	if n > (b.max.Memory-b.memory)/cellBytes {
		return fmt.Errorf("%s would make lists and maps of more than %d bytes, past the %w of one evaluation", op, b.max.Memory, ErrExprMemory)
	}
	b.memory += n * cellBytes
	return nil
}

// takeText charges n bytes of text for op.
func (b *exprBudget) takeText(op string, n int) error {
	if n > b.max.Text-b.text {
		return fmt.Errorf("%s would make %d bytes of text, after %d already made: past the %w of %d bytes for one evaluation", op, n, b.text, ErrExprBudget, b.max.Text)
	}
	b.text += n
	return nil
}

// Eval runs x with env under limits. The step's end (ctx) stops it at the
// next charge; an error that a budget caused wraps ErrExprWork,
// ErrExprMemory or ErrExprBudget. env gains the budget's entry.
func (x *Expr) Eval(ctx context.Context, env map[string]any, l ExprLimits) (any, error) {
	b := newExprBudget(ctx, l)
	env[exprBudgetVar] = b
	if err := b.stopped(); err != nil {
		return nil, err
	}
	// The VM counts the cells of the lists it makes itself (ranges,
	// literals, the results of map and filter) against a budget of its
	// own; give it the same one.
	m := vm.VM{MemoryBudget: uint(b.max.Memory / cellBytes)}
	out, err := m.Run(x.Program, env)
	var fe *file.Error
	if errors.As(err, &fe) && fe.Prev == nil && fe.Message == "memory budget exceeded" {
		return nil, fmt.Errorf("the expression made lists of more than %d bytes, past the %w of one evaluation", b.max.Memory, ErrExprMemory)
	}
	return out, err
}

// units is the work of going through v once: its elements, or a unit per
// 64 bytes of text; at least 1.
// unitsWithin is units of v counted all the way down: a list of lists
// costs its every item, as max, flatten, toJSON or == go through them all,
// however the lists were built (a list may hold the same list a thousand
// times, each a thousand items). It stops counting past limit, so the
// count costs no more than the budget it is checked against.
func (b *exprBudget) unitsWithin(v any, limit int) (int, error) {
	n := 0
	stack := []any{v}
	// Every value on the stack counts one unit at least: once they and
	// the count pass limit, the answer is past it.
	push := func(k int) bool { return n+len(stack)+k <= limit }
	for visited := 1; len(stack) > 0; visited++ {
		if n > limit {
			return n, nil
		}
		if visited%(1<<16) == 0 {
			// A count as large as the budget takes time: it stops with
			// the step, as the rest of the evaluation does.
			if err := b.stopped(); err != nil {
				return 0, err
			}
		}
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		n++
		switch v := v.(type) {
		case []any:
			if !push(len(v)) {
				return limit + 1, nil
			}
			stack = append(stack, v...)
			continue
		case map[string]any:
			if !push(len(v)) {
				return limit + 1, nil
			}
			for _, e := range v {
				stack = append(stack, e)
			}
			continue
		}
		rv := reflect.ValueOf(v)
		switch rv.Kind() {
		case reflect.Slice, reflect.Array:
			if rv.Type().Elem().Kind() != reflect.Uint8 {
				if !push(rv.Len()) {
					return limit + 1, nil
				}
				for i := 0; i < rv.Len(); i++ {
					stack = append(stack, rv.Index(i).Interface())
				}
				continue
			}
		case reflect.Map:
			if !push(rv.Len()) {
				return limit + 1, nil
			}
			for it := rv.MapRange(); it.Next(); {
				stack = append(stack, it.Value().Interface())
			}
			continue
		}
		n += units(v) - 1
	}
	return n, nil
}

func units(v any) int {
	switch v := v.(type) {
	case nil, bool, int, int64, uint64, float64:
		return 1
	case string:
		return 1 + len(v)/64
	case []byte:
		return 1 + len(v)/64
	case []any:
		return 1 + len(v)
	case map[string]any:
		return 1 + len(v)
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.String:
		return 1 + rv.Len()/64
	case reflect.Slice, reflect.Array, reflect.Map:
		return 1 + rv.Len()
	}
	return 1
}

// cells is the number of cells of a list or map, 0 for other values.
func cells(v any) int {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return rv.Len()
	}
	return 0
}

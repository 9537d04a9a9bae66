package steps

import (
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/vm/runtime"
)

// The loader rewrites, in every compiled expression, each operation that
// loops, scans or allocates into a call of a guard function that charges
// the evaluation's exprBudget first (see exprbudget.go):
//   - the collection of a loop (all, any, map, filter, reduce, count, sum,
//     find, groupBy, sortBy...) is passed through chargeFunc, which charges
//     an operation per element, and the cells of the list that map,
//     filter, groupBy and sortBy make; the VM's own loop then needs no
//     counter, as each iteration was paid for;
//   - builtins other than the constant-time ones run through guardFunc,
//     which charges their arguments' elements as work, the text they make
//     (before making it) and the cells of the lists and maps they return;
//   - the operands of operators that scan (in, ==, <, contains, matches...)
//     and of functions of the environment (num) pass through chargeFunc.
// Literals are left alone: their size is the file's.

// exprBudgetVar is the name under which an evaluation's environment
// carries its *exprBudget (see Expr.Eval).
const exprBudgetVar = "__hilrun_budget"

const (
	guardFunc  = "__hilrun_guard"
	chargeFunc = "__hilrun_charge"
)

// loops are the builtins that compile to a loop over their first
// argument; the value is how many cells of result each element may make.
var loops = map[string]int{
	"all": 0, "none": 0, "any": 0, "one": 0, "count": 0, "sum": 0,
	"find": 0, "findIndex": 0, "findLast": 0, "findLastIndex": 0, "reduce": 0,
	"map": 1, "filter": 1, "groupBy": 1, "sortBy": 2,
}

// constantTime are the builtins whose work and result do not grow with
// their arguments; they run unguarded.
var constantTime = map[string]bool{
	"len": true, "type": true, "abs": true, "ceil": true, "floor": true, "round": true,
	"first": true, "last": true, "get": true, "now": true,
	"bitnot": true, "bitand": true, "bitor": true, "bitxor": true, "bitnand": true,
	"bitshl": true, "bitshr": true, "bitushr": true,
}

// textMakers are the builtins that make text whose size textBound
// estimates before they run.
var textMakers = map[string]bool{
	"repeat": true, "replace": true, "join": true, "toJSON": true, "string": true,
	"upper": true, "lower": true, "toBase64": true, "fromBase64": true,
}

// scanning are the operators whose work grows with their operands.
var scanning = map[string]bool{
	"in": true, "==": true, "!=": true, "<": true, ">": true, "<=": true, ">=": true,
	"contains": true, "startsWith": true, "endsWith": true, "matches": true,
}

// budgetGuard is the expr.Patch visitor that routes work through the
// guard functions.
type budgetGuard struct{}

func (budgetGuard) Visit(node *ast.Node) {
	budget := func() ast.Node { return &ast.IdentifierNode{Value: exprBudgetVar} }
	call := func(fn string, args ...ast.Node) *ast.CallNode {
		return &ast.CallNode{Callee: &ast.IdentifierNode{Value: fn}, Arguments: args}
	}
	charge := func(op string, n *ast.Node) {
		if literal(*n) {
			return
		}
		ast.Patch(n, call(chargeFunc, &ast.StringNode{Value: op}, budget(), *n))
	}
	switch n := (*node).(type) {
	case *ast.BinaryNode:
		switch {
		case n.Operator == "+":
			ast.Patch(node, call(guardFunc, &ast.StringNode{Value: "+"}, budget(), n.Left, n.Right))
		case scanning[n.Operator]:
			charge(n.Operator, &n.Left)
			charge(n.Operator, &n.Right)
		}
	case *ast.BuiltinNode:
		switch {
		case len(n.Arguments) == 0:
		case isLoop(n.Name):
			ast.Patch(&n.Arguments[0], call(chargeFunc, &ast.StringNode{Value: n.Name}, budget(), n.Arguments[0]))
		case !constantTime[n.Name]:
			all := append([]ast.Node{&ast.StringNode{Value: n.Name}, budget()}, n.Arguments...)
			ast.Patch(node, call(guardFunc, all...))
		}
	case *ast.CallNode:
		if id, ok := n.Callee.(*ast.IdentifierNode); ok && strings.HasPrefix(id.Value, "__hilrun_") {
			return
		}
		name := "a call"
		if id, ok := n.Callee.(*ast.IdentifierNode); ok {
			name = id.Value
		}
		for i := range n.Arguments {
			charge(name, &n.Arguments[i])
		}
	}
}

func isLoop(name string) bool {
	_, ok := loops[name]
	return ok
}

// literal says whether n is a constant written in the expression.
func literal(n ast.Node) bool {
	switch n := n.(type) {
	case *ast.NilNode, *ast.IntegerNode, *ast.FloatNode, *ast.BoolNode, *ast.StringNode, *ast.BytesNode, *ast.ConstantNode:
		return true
	case *ast.ArrayNode:
		for _, e := range n.Nodes {
			if !literal(e) {
				return false
			}
		}
		return true
	}
	return false
}

// exprOptions are the options every expression compiles with.
func exprOptions() []expr.Option {
	return []expr.Option{
		expr.Function(guardFunc, guard),
		expr.Function(chargeFunc, charge),
		expr.Patch(budgetGuard{}),
	}
}

// budgetOf is the budget a guard function was given; an expression that
// names __hilrun_budget itself gets none.
func budgetOf(v any) (*exprBudget, error) {
	b, ok := v.(*exprBudget)
	if !ok || b == nil {
		return nil, fmt.Errorf("%s is reserved for hilrun: choose another name", exprBudgetVar)
	}
	return b, nil
}

// charge passes its value through after charging the work of going
// through it once, and the cells of the list a loop over it makes.
func charge(args ...any) (any, error) {
	op, _ := args[0].(string)
	b, err := budgetOf(args[1])
	if err != nil {
		return nil, err
	}
	v := args[2]
	n, err := b.unitsWithin(v, b.max.Work-b.work)
	if err != nil {
		return nil, err
	}
	if op == "in" && reflect.ValueOf(v).Kind() == reflect.Map {
		n = 1 // a lookup, not a scan
	}
	if err := b.takeWork(op, n); err != nil {
		return nil, err
	}
	if per := loops[op]; per > 0 {
		if err := b.takeCells(op, per*n); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// guard runs op (+ or a builtin) after charging the budget with its work
// and the most text it can make; then it charges the cells of the list or
// map it made.
func guard(args ...any) (any, error) {
	op := args[0].(string)
	b, err := budgetOf(args[1])
	if err != nil {
		return nil, err
	}
	args = args[2:]
	work := 1
	for _, a := range args {
		n, err := b.unitsWithin(a, b.max.Work-b.work-work)
		if err != nil {
			return nil, err
		}
		work += n
	}
	if err := b.takeWork(op, work); err != nil {
		return nil, err
	}
	if op == "+" {
		if len(args) != 2 {
			return nil, fmt.Errorf("+ takes two values")
		}
		l, lok := args[0].(string)
		r, rok := args[1].(string)
		if lok && rok {
			if err := b.takeText("+", len(l)+len(r)); err != nil {
				return nil, err
			}
			return l + r, nil
		}
		return runtime.Add(args[0], args[1]), nil
	}
	if textMakers[op] {
		if err := b.takeText(op, textBound(op, args, b.max.Text-b.text)); err != nil {
			return nil, err
		}
	}
	// Lists that a builtin makes are charged before it runs when their
	// size is not its arguments', after when it is.
	var before int
	switch op {
	case "split", "splitAfter":
		before = splitCount(args)
	case "fromJSON":
		// A JSON value takes two bytes at least ("0,"), nested ones a
		// few cells each.
		if s, ok := args[0].(string); ok {
			before = len(s) / 2
		}
	}
	if err := b.takeCells(op, before); err != nil {
		return nil, err
	}
	out, err := callBuiltin(op, args)
	if err != nil {
		return nil, err
	}
	if before == 0 {
		after := cells(out)
		if op == "toPairs" {
			after *= 3 // a list of pairs
		}
		if err := b.takeCells(op, after); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func callBuiltin(op string, args []any) (any, error) {
	id, ok := builtin.Index[op]
	if !ok {
		return nil, fmt.Errorf("%s: no such function", op)
	}
	fn := builtin.Builtins[id]
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

// splitCount is the number of parts split(s, sep[, n]) makes.
func splitCount(args []any) int {
	if len(args) < 2 {
		return 0
	}
	s, _ := args[0].(string)
	sep, _ := args[1].(string)
	n := strings.Count(s, sep) + 1
	if sep == "" {
		n = utf8.RuneCountInString(s)
	}
	if len(args) == 3 {
		if m, ok := toInt(args[2]); ok && m >= 0 && m < n {
			n = m
		}
	}
	return n
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
	case "upper", "lower":
		// Some runes grow when their case changes.
		return 3 * textSize(args[0], 0, limit/3+1)
	case "toBase64", "fromBase64":
		return 2 * textSize(args[0], 0, limit/2+1)
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

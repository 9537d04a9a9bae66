package steps

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/parser"
)

// This file compiles the expressions of a sequence (assert, set, a
// memory step's address and until) as validate meets them, and holds the
// environment they run in. The bounds on their work are in exprlimit.go
// and exprbudget.go.

// ExprEnv builds the environment an expression sees: every variable, the
// steps map of results by id, the process environment as env, and helper
// functions.
func ExprEnv(vars map[string]any, stepResults map[string]any, environ map[string]string) map[string]any {
	env := make(map[string]any, len(vars)+8)
	for k, val := range vars {
		env[k] = val
	}
	env["vars"] = vars
	env["steps"] = stepResults
	env["env"] = environ
	env["num"] = Num
	return env
}

// Num converts text such as "42", "0x2a", "0b101", "3.5" to a number; numbers
// pass through. Expressions call it as num(x) to compare saved text.
func Num(v any) (any, error) {
	switch v := v.(type) {
	case int, int64, uint64, float64, uint32, int32:
		return v, nil
	case string:
		s := strings.TrimSpace(v)
		if i, err := strconv.ParseInt(s, 0, 64); err == nil {
			return int(i), nil
		}
		if u, err := strconv.ParseUint(s, 0, 64); err == nil {
			return u, nil
		}
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, nil
		}
		return nil, fmt.Errorf("num(%q): not a number", v)
	case bool:
		if v {
			return 1, nil
		}
		return 0, nil
	}
	return nil, fmt.Errorf("num(%v): not a number", v)
}

// compile checks that x reads only defined variables and compiles,
// and keeps its program and the names it reads.
func (v *validator) compile(x *Expr) {
	tree, err := parser.Parse(x.Src)
	if err != nil {
		v.add(x.Pos, "expression %q does not compile: %s", x.Src, exprHint(x.Src, exprErr(err)))
		return
	}
	base := ExprEnv(nil, nil, nil)
	clash := false
	for _, name := range exprIdents(tree) {
		if _, ok := base[name]; ok {
			continue
		}
		x.Names = append(x.Names, name)
		if slices.Contains(builtin.Names, name) && v.defined[name] {
			v.add(x.Pos, "in %q, %s is the name of an expression function; write vars.%s for the variable", x.Src, name, name)
			clash = true
			continue
		}
		v.ref(x.Pos, name)
	}
	if clash {
		return
	}
	if v.branch != nil {
		for _, id := range stepRefs(tree) {
			v.stepRef(x.Pos, id)
		}
	}
	if slices.Contains(x.Names, "branches") {
		for _, ref := range branchRefs(tree) {
			v.branchRef(x.Pos, ref[0], ref[1])
		}
	}
	// Variables are left undeclared so that they compile as values of any
	// type; the runner supplies them.
	// Checked as written first: the guards that bound the work (see
	// exprlimit.go) hide the types of what they wrap.
	opts := []expr.Option{expr.Env(base), expr.AllowUndefinedVariables()}
	if _, err := expr.Compile(x.Src, append(opts, expr.Optimize(false))...); err != nil {
		v.add(x.Pos, "expression %q does not compile: %s", x.Src, exprErr(err))
		return
	}
	prog, err := expr.Compile(x.Src, append(opts, exprOptions()...)...)
	if err != nil {
		v.add(x.Pos, "expression %q does not compile: %s", x.Src, exprHint(x.Src, exprErr(err)))
		return
	}
	x.Program = prog
}

// exprIdents lists the free names an expression reads.
func exprIdents(tree *parser.Tree) []string {
	c := &identCollector{local: map[string]bool{}}
	c.declare = true
	ast.Walk(&tree.Node, c)
	c.declare = false
	ast.Walk(&tree.Node, c)
	return c.names
}

// identCollector finds the free names of an expression: the names it
// reads that no let declares.
type identCollector struct {
	declare bool // the first pass only finds let names
	names   []string
	local   map[string]bool
}

// Visit notes a let's name in the first pass and a free name in the
// second.
func (c *identCollector) Visit(n *ast.Node) {
	switch n := (*n).(type) {
	case *ast.VariableDeclaratorNode:
		c.local[n.Name] = true
	case *ast.IdentifierNode:
		if !c.declare && !c.local[n.Value] && !slices.Contains(c.names, n.Value) {
			c.names = append(c.names, n.Value)
		}
	}
}

// branchRefs lists the branch and variable of every branches.NAME.var
// an expression reads with names written out (branches.a.x,
// branches["a"]["x"]).
func branchRefs(tree *parser.Tree) [][2]string {
	var out [][2]string
	ast.Find(tree.Node, func(n ast.Node) bool {
		outer, ok := n.(*ast.MemberNode)
		if !ok {
			return false
		}
		inner, ok := outer.Node.(*ast.MemberNode)
		if !ok {
			return false
		}
		root, ok := inner.Node.(*ast.IdentifierNode)
		b, okb := inner.Property.(*ast.StringNode)
		name, okn := outer.Property.(*ast.StringNode)
		if ok && okb && okn && root.Value == "branches" {
			out = append(out, [2]string{b.Value, name.Value})
		}
		return false
	})
	return out
}

// stepRefs lists the ids of every steps.ID an expression reads with the
// id written out (steps.boot, steps["boot"]).
func stepRefs(tree *parser.Tree) []string {
	var out []string
	ast.Find(tree.Node, func(n ast.Node) bool {
		m, ok := n.(*ast.MemberNode)
		if !ok {
			return false
		}
		root, ok := m.Node.(*ast.IdentifierNode)
		id, okid := m.Property.(*ast.StringNode)
		if ok && okid && root.Value == "steps" {
			out = append(out, id.Value)
		}
		return false
	})
	return out
}

// exprErr is the first line of an expr error.
func exprErr(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

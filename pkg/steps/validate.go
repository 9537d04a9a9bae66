package steps

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/parser"
)

// validate resolves device references and checks that every variable and
// expression is defined and compiles, in step order.
func validate(seq *Sequence, opts LoadOptions, e *errs) {
	v := &validator{seq: seq, errs: e, defined: map[string]bool{}}
	for _, name := range opts.Vars {
		v.defined[name] = true
	}
	for _, vr := range seq.Vars {
		v.defined[vr.Name] = true
	}
	for _, p := range seq.FailOn {
		v.pattern(p)
	}
	v.resolveDevices()
	v.resolveProbes()
	v.qemuConsoles()
	v.resolveCameras()
	v.steps(seq.Steps)
	// finally steps run whatever happened, so they may see any variable
	// that the steps could have set.
	v.steps(seq.Finally)
	before := len(e.list)
	checkExecutions(seq.Steps, e)
	checkExecutions(seq.Finally, e)
	if n, _ := Executions(seq); n > MaxExecutions && len(e.list) == before {
		e.add(seq.Pos, "the sequence would run %s steps, more than the limit of %d steps per run (the execution limit): lower the counts of its repeats, or split the run", count(n), MaxExecutions)
	}
}

type validator struct {
	seq     *Sequence
	errs    *errs
	defined map[string]bool
}

func (v *validator) add(p Pos, format string, args ...any) { v.errs.add(p, format, args...) }

func (v *validator) definedNames() []string {
	var names []string
	for n := range v.defined {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func (v *validator) ref(p Pos, name string) {
	if strings.HasPrefix(name, "env.") {
		return
	}
	if !v.defined[name] {
		v.add(p, "variable %q is not defined here: define it under vars:, set it or save it in an earlier step, or pass --var %s=VALUE%s", name, name, suggest(name, v.definedNames()))
	}
}

func (v *validator) template(p Pos, t *Template) {
	if t == nil {
		return
	}
	for _, name := range t.Refs() {
		v.ref(p, name)
	}
}

func (v *validator) pattern(p *PatternSpec) {
	v.template(p.Pos, &p.Text)
}

func (v *validator) steps(ss []*Step) {
	for _, s := range ss {
		v.step(s)
	}
}

func (v *validator) step(s *Step) {
	for _, p := range s.FailOn {
		v.pattern(p)
	}
	if k, ok := LookupKind(s.Kind); ok && k.check != nil {
		k.check(v, s)
	}
}

// command checks the templates of a command and its environment, and the
// device whose port it uses.
func (v *validator) command(p Pos, argv []*Template, env map[string]*Template, port string) {
	for _, t := range argv {
		v.template(p, t)
	}
	for _, t := range env {
		v.template(p, t)
	}
	if port != "" && v.seq.Device(port) == nil && !IsPortPath(port) {
		v.add(p, "port: unknown device %q%s", port, suggest(port, deviceNames(v.seq)))
	}
}

func (v *validator) expect(s *Step) {
	for _, p := range s.Expect {
		v.pattern(p)
	}
	for _, sv := range s.Save {
		for _, p := range s.Expect {
			if p.static.IsZero() {
				continue
			}
			names := p.static.SubexpNames()
			switch {
			case sv.GroupName != "":
				if !slices.Contains(names, sv.GroupName) {
					v.add(sv.Pos, "save %s: the pattern %s has no group named %q", sv.Var, p.String(), sv.GroupName)
				}
			case sv.Group > 0 && sv.Group >= len(names):
				v.add(sv.Pos, "save %s: the pattern %s has %d group(s), not %d", sv.Var, p.String(), len(names)-1, sv.Group)
			}
		}
		v.defined[sv.Var] = true
	}
	// Named groups are saved under their own names.
	for _, p := range s.Expect {
		if p.static.IsZero() {
			continue
		}
		for _, n := range p.static.SubexpNames() {
			if n != "" {
				v.defined[n] = true
			}
		}
	}
}

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

type identCollector struct {
	declare bool // the first pass only finds let names
	names   []string
	local   map[string]bool
}

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

func exprErr(err error) string {
	s := err.Error()
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

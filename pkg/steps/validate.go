package steps

import (
	"slices"
	"sort"
	"strings"
)

// validate resolves device references and checks that every variable and
// expression is defined and compiles, in step order. It returns the
// secrets the steps send.
func validate(seq *Sequence, opts LoadOptions, e *errs) (sent map[string]bool) {
	v := &validator{seq: seq, errs: e, defined: map[string]bool{}, outside: map[string]bool{}, sent: map[string]bool{}}
	v.declareSecrets()
	for _, name := range opts.Vars {
		v.defined[name] = true
		v.outside[name] = true
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
	v.matrix(seq.Matrix, nil)
	if seq.Matrix != nil {
		v.matrixKeys = seq.Matrix.Names()
	}
	v.checkRetry(seq.Retry, false)
	v.steps(seq.Steps)
	// finally steps run whatever happened, so they may see any variable
	// that the steps could have set.
	v.steps(seq.Finally)
	if barrierWorkHook != nil {
		barrierWorkHook(v.barrierWork)
	}
	// Once checked, each matrix becomes its cases, which the execution
	// limit counts.
	expandMatrices(seq)
	before := len(e.list)
	checkExecutions(seq.Steps, e)
	checkExecutions(seq.Finally, e)
	if n, _ := Executions(seq); n > MaxExecutions && len(e.list) == before {
		e.add(seq.Pos, "the sequence would run %s steps, more than the limit of %d steps per run (the execution limit): lower the counts of its repeats, or split the run", count(n), MaxExecutions)
	}
	return v.sent
}

// barrierWorkHook, when set (by the tests), hears the work validate
// spent following barriers (see MaxBarrierWork).
var barrierWorkHook func(uint64)

// validator is one pass over a decoded sequence: defined holds the
// variables defined so far, in step order.
type validator struct {
	seq     *Sequence
	errs    *errs
	defined map[string]bool
	// outside are the variables given from outside the file (--var);
	// matrixKeys the keys of the matrices around the step checked.
	outside    map[string]bool
	matrixKeys []string
	// repeats counts the repeats around the step being checked.
	repeats int
	// secrets are the names under secrets:; sendable is set while the
	// templates that may hold them (a send's text, a command) are checked.
	secrets  map[string]bool
	sendable bool
	// sent are the secrets a send or a command sends.
	sent map[string]bool
	// branch is the branch of a parallel: step being checked, nil
	// outside one; branchVars are the variables each branch of the
	// parallel: steps checked so far saves, by branch name, which later
	// steps read as branches.NAME.var.
	branch     *branchCheck
	branchVars map[string]map[string]bool
	// barrierWork is the work spent following the barriers of the
	// file's parallel: steps, bounded by MaxBarrierWork.
	barrierWork uint64
}

// add records a problem at p.
func (v *validator) add(p Pos, format string, args ...any) { v.errs.add(p, format, args...) }

// definedNames are the variables defined so far, sorted, for
// suggestions.
func (v *validator) definedNames() []string {
	var names []string
	for n := range v.defined {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// define records that the variable name is defined from here on, in the
// branch being checked when there is one.
func (v *validator) define(name string) {
	v.defined[name] = true
	if v.branch != nil {
		v.branch.wrote[name] = true
	}
}

// ref checks that the variable name is defined here; env.NAME always
// is, branches.NAME.var when a branch before saved it.
func (v *validator) ref(p Pos, name string) {
	if strings.HasPrefix(name, "env.") || v.secretRef(p, name) {
		return
	}
	if rest, ok := strings.CutPrefix(name, "branches."); ok {
		branch, vr, _ := strings.Cut(rest, ".")
		v.branchRef(p, branch, vr)
		return
	}
	if !v.defined[name] {
		v.add(p, "variable %q is not defined here: define it under vars:, set it or save it in an earlier step, or pass --var %s=VALUE%s", name, name, suggest(name, v.definedNames()))
	}
}

// template checks the references of t, reported at p.
func (v *validator) template(p Pos, t *Template) {
	if t == nil {
		return
	}
	for _, name := range t.Refs() {
		v.ref(p, name)
	}
}

// pattern checks the references of a pattern.
func (v *validator) pattern(p *PatternSpec) {
	v.template(p.Pos, &p.Text)
}

// steps checks ss in order.
func (v *validator) steps(ss []*Step) {
	for _, s := range ss {
		v.step(s)
	}
}

// step checks one step: its fail_on patterns, then what its kind checks.
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

// expect checks a step's expect and save: the references of its
// patterns, and that each saved group exists; it defines the variables
// saved.
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
		v.define(sv.Var)
	}
	// Named groups are saved under their own names.
	for _, p := range s.Expect {
		if p.static.IsZero() {
			continue
		}
		for _, n := range p.static.SubexpNames() {
			if n != "" {
				v.define(n)
			}
		}
	}
}

package steps

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/builtin"
	"github.com/expr-lang/expr/parser"
)

var portPathRE = regexp.MustCompile(`^(/|\\\\\.\\|COM[0-9]+$)`)

// IsPortPath reports whether a `to` value is a serial port path rather than
// a device name.
func IsPortPath(s string) bool { return portPathRE.MatchString(s) }

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

// resolveDevices gives every serial step its device: a declared name, a port
// path (an implicit device at 115200 8N1), or the only device there is.
func (v *validator) resolveDevices() {
	declared := len(v.seq.Devices)
	var walk func([]*Step)
	needDefault := []*Step{}
	walk = func(ss []*Step) {
		for _, s := range ss {
			if k, ok := LookupKind(s.Kind); ok && k.On == OnDevice {
				switch {
				case s.To == "":
					needDefault = append(needDefault, s)
				case v.seq.Device(s.To) != nil:
				case IsPortPath(s.To):
					v.seq.Devices = append(v.seq.Devices, &Device{Name: s.To, Port: s.To, Implicit: true, Pos: s.Pos})
				default:
					var names []string
					for _, d := range v.seq.Devices {
						names = append(names, d.Name)
					}
					v.add(s.Pos, "to: unknown device %q; devices are %s%s", s.To, listOrNone(names), suggest(s.To, names))
				}
			}
			walk(s.Steps)
		}
	}
	walk(v.seq.Steps)
	walk(v.seq.Finally)
	if len(needDefault) == 0 {
		return
	}
	var def string
	switch {
	case declared == 1:
		def = v.seq.Devices[0].Name
	case declared == 0 && len(v.seq.Devices) == 1:
		def = v.seq.Devices[0].Name
	case declared == 0 && len(v.seq.Devices) == 0:
		v.seq.Devices = append(v.seq.Devices, &Device{Name: DefaultDevice, Implicit: true, Pos: v.seq.Pos})
		def = DefaultDevice
	default:
		var names []string
		for _, d := range v.seq.Devices {
			names = append(names, d.Name)
		}
		for _, s := range needDefault {
			v.add(s.Pos, "this %s step needs to: because the sequence has several devices (%s)", s.Kind, strings.Join(names, ", "))
		}
		return
	}
	for _, s := range needDefault {
		s.To = def
	}
}

// qemuConsoles checks that the console of each QEMU a probe launches is a
// device of the sequence, which has no port of its own: the launch binds
// it to QEMU's serial port.
func (v *validator) qemuConsoles() {
	for _, p := range v.seq.Probes {
		if !p.LaunchesQEMU() || p.Launch.QEMU.Console == "" {
			continue
		}
		q := p.Launch.QEMU
		d := v.seq.Device(q.Console)
		switch {
		case d == nil:
			names := deviceNames(v.seq)
			v.add(q.Pos, "qemu console: unknown device %q; devices are %s%s (a sequence without steps that talk to a device has none: declare it under devices:)", q.Console, listOrNone(names), suggest(q.Console, names))
		case d.Port != "" || d.USB != nil:
			v.add(q.Pos, "qemu console: device %s has a port of its own in the sequence, and probe %s's launch binds it to QEMU's serial port: give one of them", d.Name, p.Name)
		}
	}
}

// usesProbe reports whether s talks to a debug probe.
func usesProbe(s *Step) bool {
	return IsProbeKind(s.Kind) || s.Kind == KindUpload && s.Build != nil && s.Build.Image != nil
}

// resolveProbes gives every memory and debugger step its probe: a declared
// one, the only one, or, in a sequence that declares none, a probe by the
// name the step gives (seed files name probes by nickname) that the bench,
// --openocd or --sim binds.
func (v *validator) resolveProbes() {
	declared := len(v.seq.Probes)
	var names []string
	for _, p := range v.seq.Probes {
		names = append(names, p.Name)
	}
	var walk func([]*Step)
	walk = func(ss []*Step) {
		for _, s := range ss {
			if usesProbe(s) {
				switch {
				case s.To == "" && declared == 1:
					s.To = v.seq.Probes[0].Name
				case s.To == "" && declared > 1:
					v.add(s.Pos, "this %s step needs probe: because the sequence has several probes (%s)", s.Kind, strings.Join(names, ", "))
				case s.To == "":
					s.To = DefaultProbe
				case v.seq.Probe(s.To) != nil:
				case declared > 0:
					v.add(s.Pos, "probe: unknown probe %q; probes are %s%s", s.To, strings.Join(names, ", "), suggest(s.To, names))
				}
				if declared == 0 && s.To != "" && v.seq.Probe(s.To) == nil {
					v.seq.Probes = append(v.seq.Probes, &Probe{Name: s.To, Implicit: true, Pos: s.Pos})
				}
			}
			walk(s.Steps)
		}
	}
	walk(v.seq.Steps)
	walk(v.seq.Finally)
}

// resolveCameras gives every camera step its camera: a declared name, the
// only one declared, a camera index or device path or URL (an implicit
// camera), or in a sequence that declares none a name the bench binds.
func (v *validator) resolveCameras() {
	declared := len(v.seq.Cameras)
	var names []string
	for _, c := range v.seq.Cameras {
		names = append(names, c.Name)
	}
	Walk(v.seq, func(s *Step) {
		if s.Kind != KindCamera || s.Camera == nil {
			return
		}
		c := s.Camera
		switch {
		case c.Camera == "" && declared == 1:
			c.Camera = v.seq.Cameras[0].Name
		case c.Camera == "" && declared > 1:
			v.add(s.Pos, "this step needs camera: because the sequence has several cameras (%s)", strings.Join(names, ", "))
			return
		case c.Camera == "":
			c.Camera = DefaultCamera
		case v.seq.Camera(c.Camera) != nil:
			return
		case isCameraInput(c.Camera):
		case declared > 0:
			v.add(s.Pos, "camera: unknown camera %q; cameras are %s%s", c.Camera, strings.Join(names, ", "), suggest(c.Camera, names))
			return
		}
		if v.seq.Camera(c.Camera) != nil {
			return
		}
		cam := &Camera{Name: c.Camera, Implicit: true, Pos: s.Pos}
		switch {
		case c.Camera == DefaultCamera:
			// The host's first camera, unless the bench or --sim binds it.
			cam.Input = "0"
		case isCameraInput(c.Camera):
			cam.Input = c.Camera
		}
		v.seq.Cameras = append(v.seq.Cameras, cam)
	})
}

// isCameraInput reports whether a camera reference is an input (an index,
// a device path, a URL) rather than a name.
func isCameraInput(s string) bool {
	if _, err := strconv.Atoi(s); err == nil {
		return true
	}
	return strings.ContainsAny(s, "/:\\")
}

func deviceNames(seq *Sequence) []string {
	var names []string
	for _, d := range seq.Devices {
		names = append(names, d.Name)
	}
	return names
}

func listOrNone(names []string) string { return listOrNoneUnder(names, "devices") }

// listOrNoneUnder lists names, or says that there are none and which
// section of the sequence declares them.
func listOrNoneUnder(names []string, section string) string {
	if len(names) == 0 {
		return "none (declare them under " + section + ":)"
	}
	return strings.Join(names, ", ")
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

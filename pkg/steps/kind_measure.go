package steps

import (
	"math"
	"regexp"
	"slices"
	"strconv"

	"gopkg.in/yaml.v3"
)

// KindMeasure records a named value with its unit and checks it against
// its limits: measure: {name: vbat, value: num(v), unit: V, min: 3.0,
// max: 3.6}. value is an expression, as in assert:; the limits are min:
// and max: for a number, equals: for one value, or regex: for text. A
// value outside its limits fails the step. Every report lists the
// measurement, and a repeat summarises each of its measurements as
// statistics.
const KindMeasure Kind = "measure"

// MaxMeasureName bounds the length of a measurement's name.
const MaxMeasureName = 100

// MeasureArgs is what a measure step holds in Step.Args.
type MeasureArgs struct {
	// Name names the measurement in every report: letters, digits and
	// "_", ".", "-", up to MaxMeasureName characters.
	Name string
	// Value is the expression that gives the value: a number, text or a
	// boolean.
	Value *Expr
	// Unit is how the reports write the value's unit ("V", "mA"); "" for
	// none.
	Unit string
	// Min and Max bound a number, both ends included; nil for no bound.
	// MinText and MaxText are the limits as written, for messages.
	Min, Max         *float64
	MinText, MaxText string
	// Equals is the one value the measurement must have: a number (int,
	// uint64 or float64), text or a boolean; nil for none.
	Equals any
	// Regex is a pattern the value's text must match (anywhere: anchor it
	// with ^ and $ for the whole text); nil for none.
	Regex *regexp.Regexp
}

// HasLimits reports whether the measurement is checked, not only
// recorded.
func (a *MeasureArgs) HasLimits() bool {
	return a.Min != nil || a.Max != nil || a.Equals != nil || a.Regex != nil
}

// measureKeys are the keys of measure: {...}.
var measureKeys = []string{"name", "value", "unit", "min", "max", "equals", "regex"}

func init() {
	registerKind(KindSpec{
		Kind:    KindMeasure,
		Keys:    []string{"measure"},
		Doc:     "record a named value with its unit, checked against its limits",
		Example: `{"measure": {"name": "vbat", "value": "num(v)", "unit": "V", "min": 3.0, "max": 3.6}}`,
		decode: func(d *decoder, s *Step, key string, v *yaml.Node) bool {
			if key != "measure" {
				return false
			}
			s.Args = d.measure(v)
			return true
		},
		check: func(v *validator, s *Step) {
			if a, ok := s.Args.(*MeasureArgs); ok && a.Value != nil {
				v.compile(a.Value)
			}
		},
		title: func(s *Step) string {
			if a, ok := s.Args.(*MeasureArgs); ok && a.Name != "" {
				return clip(a.Name)
			}
			return string(KindMeasure)
		},
	})
}

// measure reads measure: {name, value, unit, min, max, equals, regex}.
func (d *decoder) measure(v *yaml.Node) *MeasureArgs {
	a := &MeasureArgs{}
	if v.Kind != yaml.MappingNode {
		d.add(d.pos(v), "measure must be a mapping such as {name: vbat, value: num(v), unit: V, min: 3.0, max: 3.6}, found %s", kindName(v))
		return a
	}
	at := map[string]*yaml.Node{}
	for _, p := range d.pairs(v) {
		k := p.key.Value
		if !slices.Contains(measureKeys, k) {
			d.unknownKey(p.key, "measure", measureKeys)
			continue
		}
		at[k] = p.key
		switch k {
		case "name":
			d.measureName(a, p.val)
		case "value":
			if src, ok := d.text(p.val, "measure value"); ok {
				a.Value = &Expr{Src: src, Pos: d.pos(p.val)}
			}
		case "unit":
			a.Unit, _ = d.str(p.val, "measure unit")
		case "min":
			a.Min, a.MinText = d.limit(p.val, "min")
		case "max":
			a.Max, a.MaxText = d.limit(p.val, "max")
		case "equals":
			if p.val.Kind != yaml.ScalarNode || p.val.Tag == "!!null" {
				d.add(d.pos(p.val), "measure equals must be a number, text or a boolean, found %s", kindName(p.val))
			} else {
				a.Equals, _ = d.scalarValue(p.val, "measure equals")
			}
		case "regex":
			if src, ok := d.str(p.val, "measure regex"); ok {
				re, err := regexp.Compile(src)
				if err != nil {
					d.add(d.pos(p.val), "measure regex %q does not compile: %v", src, err)
				} else {
					a.Regex = re
				}
			}
		}
	}
	d.measureChecks(v, a, at)
	return a
}

// measureName reads the measurement's name.
func (d *decoder) measureName(a *MeasureArgs, v *yaml.Node) {
	name, ok := d.text(v, "measure name")
	switch {
	case !ok:
	case name == "" || len(name) > MaxMeasureName || !measureNameRE.MatchString(name):
		d.add(d.pos(v), "measure name %q must be 1 to %d letters, digits, \"_\", \".\" or \"-\", starting with a letter or \"_\"", name, MaxMeasureName)
	default:
		a.Name = name
	}
}

var measureNameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// measureChecks checks what the keys of measure: say together.
func (d *decoder) measureChecks(v *yaml.Node, a *MeasureArgs, at map[string]*yaml.Node) {
	if at["name"] == nil {
		d.add(d.pos(v), "measure needs a name: such as vbat, which the reports show it by")
	}
	if at["value"] == nil {
		d.add(d.pos(v), "measure needs a value: an expression such as num(v)")
	}
	if a.Min != nil && a.Max != nil && *a.Min > *a.Max {
		d.add(d.pos(at["min"]), "measure min %s is above its max %s: no value could pass", a.MinText, a.MaxText)
	}
	// One kind of limit per measurement: a range, one value or a pattern.
	for _, k := range []string{"equals", "regex"} {
		if at[k] == nil {
			continue
		}
		for _, other := range []string{"min", "max", "equals"} {
			if other != k && at[other] != nil {
				d.add(d.pos(at[k]), "measure %s is a limit of its own: leave out %s (a measurement has min/max, equals or regex)", k, other)
				break
			}
		}
	}
}

// limit reads min: or max:, a finite number, and keeps it as written.
func (d *decoder) limit(n *yaml.Node, what string) (*float64, string) {
	if n.Kind == yaml.ScalarNode && (n.Tag == "!!int" || n.Tag == "!!float") {
		f, err := strconv.ParseFloat(n.Value, 64)
		if err != nil {
			var i int64
			if n.Decode(&i) == nil {
				f, err = float64(i), nil
			}
		}
		if err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			return &f, n.Value
		}
	}
	d.add(d.pos(n), "measure %s must be a number, found %s", what, kindName(n))
	return nil, ""
}

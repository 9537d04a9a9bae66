package steps

import (
	"strings"
	"testing"
)

func TestMeasureStep(t *testing.T) {
	src := "name: m\nvars: {v: \"3.3\"}\nsteps:\n  - measure: {name: vbat, value: num(v), unit: V, min: 3.0, max: 3.6}\n  - measure: {name: fw, value: v, equals: \"3.3\"}\n"
	seq, err := Parse("m.yaml", []byte(src), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a, ok := seq.Steps[0].Args.(*MeasureArgs)
	if seq.Steps[0].Kind != KindMeasure || !ok {
		t.Fatalf("measure step decoded as %s with %#v", seq.Steps[0].Kind, seq.Steps[0].Args)
	}
	if a.Name != "vbat" || a.Unit != "V" || *a.Min != 3 || *a.Max != 3.6 || a.MinText != "3.0" || a.Value.Program == nil {
		t.Errorf("decoded %+v", a)
	}
	if got := seq.Steps[0].Title(); got != "vbat" {
		t.Errorf("title %q, want the measurement's name", got)
	}
	if b := seq.Steps[1].Args.(*MeasureArgs); b.Equals != "3.3" || b.HasLimits() != true {
		t.Errorf("equals decoded as %#v", b.Equals)
	}

	for _, tt := range []struct{ name, step, want string }{
		{"min above max", "{name: v, value: '1', min: 4, max: 3}", "m.yaml:2:36: measure min 4 is above its max 3: no value could pass"},
		{"equals with min", "{name: v, value: '1', min: 1, equals: 1}", "m.yaml:2:44: measure equals is a limit of its own: leave out min"},
		{"regex with max", "{name: v, value: '1', max: 1, regex: x}", "m.yaml:2:44: measure regex is a limit of its own: leave out max"},
		{"unknown key", "{name: v, value: '1', units: V}", `m.yaml:2:36: unknown key "units" in measure (did you mean "unit"?)`},
		{"no name", "{value: '1'}", "m.yaml:2:14: measure needs a name:"},
		{"no value", "{name: v}", "m.yaml:2:14: measure needs a value:"},
		{"bad name", "{name: 'a b', value: '1'}", `m.yaml:2:21: measure name "a b" must be`},
		{"min not a number", "{name: v, value: '1', min: low}", "m.yaml:2:41: measure min must be a number, found the text \"low\""},
		{"bad regex", "{name: v, value: '1', regex: '('}", `m.yaml:2:43: measure regex "(" does not compile`},
		{"undefined variable", "{name: v, value: num(nope)}", `m.yaml:2:31: variable "nope" is not defined here`},
		{"not compiling", "{name: v, value: '1 +'}", `m.yaml:2:31: expression "1 +" does not compile`},
		{"not a mapping", "vbat", "m.yaml:2:14: measure must be a mapping"},
		{"a step key", "{name: v, value: '1'}\n    to: dut", `m.yaml:3:5: unknown key "to" in a measure step`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("m.yaml", []byte("steps:\n  - measure: "+tt.step+"\n"), LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

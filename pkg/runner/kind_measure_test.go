package runner_test

import (
	"context"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
)

// A measure step records its value with its unit and limits, and fails
// when the value is outside them, saying where it is and where it should
// be.
func TestMeasure(t *testing.T) {
	for _, tt := range []struct {
		name, step string
		status     runner.Status
		message    string
		value      any
	}{
		{"within a range", `{name: vbat, value: num(v), unit: V, min: 3.0, max: 3.6}`, runner.Passed, "vbat = 3.31 V, within [3.0, 3.6] V", 3.31},
		{"outside a range", `{name: vbat, value: num(v) + 0.4, unit: V, min: 3.0, max: 3.6}`, runner.Failed, "vbat = 3.71 V, outside [3.0, 3.6] V", 3.71},
		{"below a min", `{name: vbat, value: num(v), unit: V, min: 3.5}`, runner.Failed, "vbat = 3.31 V, below its min 3.5 V", 3.31},
		{"above a max", `{name: i, value: n * 2, unit: mA, max: 10}`, runner.Failed, "i = 14 mA, above its max 10 mA", 14.0},
		{"no limits", `{name: n, value: n}`, runner.Passed, "n = 7", 7.0},
		{"equals text", `{name: fw, value: fw, equals: "1.2"}`, runner.Passed, `fw = "1.2"`, "1.2"},
		{"equals a number", `{name: code, value: n, equals: 0}`, runner.Failed, "code = 7, not 0", 7.0},
		{"regex", `{name: fw, value: fw, regex: '^2\.'}`, runner.Failed, `fw = "1.2", which does not match ^2\.`, "1.2"},
		{"text where a number is wanted", `{name: vbat, value: v, min: 3}`, runner.Failed, `vbat = "3.31", which is text, not a number (num(...) makes a number of text)`, "3.31"},
		{"a list", `{name: l, value: "[1, 2]"}`, runner.Failed, "measure l: the value is []interface {} ([1 2]); want a number, text or a boolean", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			seq := load(t, "vars: {v: \"3.31\", n: 7, fw: \"1.2\"}\nsteps:\n  - measure: "+tt.step+"\n")
			res := run(t, context.Background(), seq, nil, nil)
			st := res.Steps[0]
			if st.Status != tt.status || st.Message != tt.message {
				t.Fatalf("got %s %q, want %s %q", st.Status, st.Message, tt.status, tt.message)
			}
			if tt.value == nil {
				if st.Measurement != nil {
					t.Errorf("measurement %+v recorded for a value it cannot hold", st.Measurement)
				}
				return
			}
			m := st.Measurement
			if m == nil || m.Value != tt.value || m.Outcome != tt.status {
				t.Errorf("measurement %+v, want value %v outcome %s", m, tt.value, tt.status)
			}
		})
	}
}

package mcpserver

import (
	"strings"
	"testing"
)

// serial_sequence's result carries the measurements its steps made,
// iterations included, and its text shows a repeat's statistics.
func TestSequenceMeasurements(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	out := e.sequence(map[string]any{"steps": []any{
		map[string]any{"send": "echo vbat=3.31", "expect": `vbat=([0-9.]+)`, "regex": true, "save": "vbat"},
		map[string]any{"measure": map[string]any{"name": "vbat", "value": "num(vbat)", "unit": "V", "min": 3.0, "max": 3.6}},
		map[string]any{"repeat": 3, "steps": []any{
			map[string]any{"measure": map[string]any{"name": "n", "value": "num(vbat) * 1000", "unit": "mV", "max": 3400}},
		}},
	}})
	if !out.Passed {
		t.Fatalf("status %s: %s", out.Status, out.Result)
	}
	if len(out.Measurements) != 4 {
		t.Fatalf("measurements %+v, want 4", out.Measurements)
	}
	m := out.Measurements[0]
	if m.Name != "vbat" || m.Value != 3.31 || m.Unit != "V" || *m.Min != 3 || m.Outcome != "passed" || m.Step != "1" || m.Iteration != nil {
		t.Errorf("first measurement %+v", m)
	}
	if last := out.Measurements[3]; last.Name != "n" || last.Iteration == nil || *last.Iteration != 2 {
		t.Errorf("last measurement %+v, want n of iteration 2", last)
	}
	if !strings.Contains(out.Result, "vbat = 3.31 V, within [3, 3.6] V") || !strings.Contains(out.Result, "n: 3 values, all ≤ 3400 mV; min 3310 mV") {
		t.Errorf("result text:\n%s", out.Result)
	}
}

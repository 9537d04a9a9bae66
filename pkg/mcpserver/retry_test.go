package mcpserver

import (
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/sim"
)

// serial_sequence takes retries: the result lists every attempt and says
// flaky when one passed after another did not; a group takes retries and
// before_retry as in a file.
func TestSerialSequenceRetries(t *testing.T) {
	e := newEnv(t, envOptions{})
	b := sim.New(sim.Options{})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	var op openResult
	decode(t, e.call("serial_open", map[string]any{"port": b.SerialPath(), "label": "dut", "prompt": "sim> "}), &op)

	var res sequenceResult
	decode(t, e.call("serial_sequence", map[string]any{"retries": 2, "on_failure": "stop", "steps": []any{
		map[string]any{"send": "flaky seq 1", "to": "dut", "expect": "OK seq", "timeout": "60s"},
	}}), &res)
	if !res.Passed || !res.Flaky || len(res.Attempts) != 2 || res.Attempts[0].Status != "failed" || res.Counts.Retried != 1 {
		t.Fatalf("retries 2, passing on the second attempt: %+v", res)
	}
	if !strings.Contains(res.Result, "passed 1/1") || !strings.Contains(res.Result, "flaky") {
		t.Errorf("the text result: %s", res.Result)
	}

	decode(t, e.call("serial_sequence", map[string]any{"steps": []any{
		map[string]any{"group": "adc", "retries": 1, "before_retry": []any{map[string]any{"send": "echo again", "to": "dut", "expect": "again"}},
			"steps": []any{map[string]any{"send": "flaky grp 1", "to": "dut", "expect": "OK grp", "timeout": "60s"}}},
	}}), &res)
	var group bool
	for _, st := range res.Steps {
		if st.Kind == "group" {
			group = st.Flaky && len(st.Attempts) == 2
		}
	}
	if !res.Passed || !res.Flaky || !group {
		t.Errorf("a group with retries: %+v", res)
	}
	if msg := e.callErr("serial_sequence", map[string]any{"retries": 21, "steps": []any{map[string]any{"send": "x", "to": "dut"}}}); !strings.Contains(msg, "retries") {
		t.Errorf("retries 21: %s", msg)
	}
}

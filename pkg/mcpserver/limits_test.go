package mcpserver

import (
	"strings"
	"testing"
)

// A call may run at most MaxSteps steps: a sequence whose count is known
// is refused before it runs, one bounded only by time stops at the limit,
// and the next call works.
func TestStepLimitPerCall(t *testing.T) {
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.MaxSteps = 100 }})
	msg := e.callErr("serial_sequence", map[string]any{"steps": []any{
		map[string]any{"repeat": map[string]any{"count": 200}, "steps": []any{map[string]any{"set": map[string]any{"x": 1}}}},
	}})
	if !strings.Contains(msg, "step limit of 100") || !strings.Contains(msg, "--max-steps") {
		t.Errorf("counted repeat: %s", msg)
	}
	out := e.sequence(map[string]any{"on_failure": "stop", "steps": []any{
		map[string]any{"repeat": map[string]any{"for": "1h"}, "steps": []any{map[string]any{"set": map[string]any{"x": 1}}}},
	}})
	if out.Passed || !strings.Contains(out.Error+text2(out), "step limit of 100") {
		t.Errorf("time-bounded repeat: passed %v, error %q, steps %s", out.Passed, out.Error, text2(out))
	}
	if got := e.sequence(map[string]any{"steps": []any{map[string]any{"send": "version", "expect": "hilrun"}}}); !got.Passed {
		t.Errorf("the next call: %+v", got)
	}
}

func text2(r sequenceResult) string {
	var b strings.Builder
	for _, s := range r.Steps {
		b.WriteString(s.Message + "\n")
	}
	return b.String()
}

// A value past the limit ends its step, not the server; the next call
// works.
func TestValueLimitOverMCP(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	out := e.sequence(map[string]any{"vars": map[string]any{"s": "x"}, "on_failure": "stop", "steps": []any{
		map[string]any{"repeat": map[string]any{"count": 64}, "steps": []any{map[string]any{"set": map[string]any{"s": "${s}${s}"}}}},
	}})
	if out.Passed || !strings.Contains(out.Error, "value limit") {
		t.Errorf("doubling: passed %v, error %q", out.Passed, out.Error)
	}
	if got := e.sequence(map[string]any{"steps": []any{map[string]any{"send": "version", "expect": "hilrun"}}}); !got.Passed {
		t.Errorf("the next call: %+v", got)
	}
}

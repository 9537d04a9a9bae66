package mcpserver

import (
	"strings"
	"testing"
)

// A problem in steps that arrive over MCP names its place as a JSON
// pointer into the call's arguments, however the steps were given.
func TestInlineErrorsNamePointers(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	tests := []struct {
		name string
		args map[string]any
		want string
	}{
		{"a JSON list", map[string]any{"steps": []any{
			map[string]any{"delay": "1ms"}, map[string]any{"delay_ms": 1}, map[string]any{"delay": "1ms"},
			map[string]any{"send": "x", "expect": map[string]any{"regex": "a("}},
		}}, "serial_sequence: /steps/3/expect/regex: expect: invalid regexp"},
		{"finally", map[string]any{"steps": []any{map[string]any{"delay": "1ms"}}, "finally": []any{map[string]any{"delay": 5}}},
			"serial_sequence: /finally/0/delay: delay must be a duration with a unit"},
		{"nested steps", map[string]any{"steps": []any{map[string]any{"group": "g", "steps": []any{map[string]any{"delya": "1ms"}}}}},
			`serial_sequence: /steps/0/steps/0: unknown step kind "delya"`},
		{"a string of YAML", map[string]any{"steps": "- delay: 1ms\n- send: x\n  expct: y\n"},
			`serial_sequence: /steps/1/expct: unknown key "expct"`},
		{"a whole sequence in steps", map[string]any{"steps": map[string]any{
			"devices": map[string]any{"dut": map[string]any{"port": "/dev/ttyX", "baud": "fast"}},
			"steps":   []any{map[string]any{"send": "x", "to": "dut"}},
		}}, `serial_sequence: /devices/dut/baud: baud must be a whole number, found the text "fast"`},
		{"the devices argument", map[string]any{"steps": []any{map[string]any{"send": "x", "to": "dut"}},
			"devices": map[string]any{"dut": map[string]any{"port": "/dev/ttyX", "parity": "evn"}}},
			`serial_sequence: /devices/dut/parity: parity must be one of none`},
		{"vars", map[string]any{"steps": []any{map[string]any{"delay": "1ms"}}, "vars": map[string]any{"a/b": 1}},
			`serial_sequence: /vars/a~1b: variable name "a/b"`},
		{"a policy refusal", map[string]any{"steps": []any{map[string]any{"delay": "1ms"}, map[string]any{"exec": []any{"true"}}}},
			`serial_sequence: /steps/1: exec:`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if msg := e.callErr("serial_sequence", tc.args); !strings.Contains(msg, tc.want) {
				t.Errorf("error:\n%s\nwant it to hold %q", msg, tc.want)
			}
		})
	}
}

package mcpserver

import (
	"strings"
	"testing"
)

// Expressions a client sends end their call with an error that names the
// budget they ran out of, whatever they ask, and the next call works.
func TestExprBudgetsOverMCP(t *testing.T) {
	set30k := map[string]any{"set": map[string]any{"s": map[string]any{"expr": `repeat("x", 30000)`}}}
	tests := []struct {
		name   string
		config func(*Config)
		assert string
		want   string
	}{
		{"lists of lists", nil, `len(map(split(s, ""), {split(s, "")})) > 0`, "expression memory budget"},
		{"nested loops", nil, `let l = split(s, ""); all(l, {all(l, {all(l, {true})})})`, "expression work budget"},
		{"nested loops past the call's timeout", func(c *Config) { c.MaxExprWork = 1 << 62 },
			`let l = split(s, ""); all(l, {all(l, {all(l, {true})})})`, "sequence timeout after 2s"},
		{"max over lists of lists", nil, `let a = 1..1000; let b = map(1..1000, {a}); let c = map(1..1000, {b}); let d = map(1..1000, {c}); max(d) == 1000`, "expression work budget"},
		{"flatten of lists of lists", nil, `let a = 1..1000; let b = map(1..1000, {a}); let c = map(1..100, {b}); len(flatten(c)) > 0`, "expression work budget"},
		{"max over lists of lists past the call's timeout", func(c *Config) { c.MaxExprWork = 1 << 62 },
			`let a = 1..1000; let b = map(1..1000, {a}); let c = map(1..1000, {b}); let d = map(1..1000, {c}); max(d) == 1000`, "sequence timeout after 2s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, envOptions{sim: true, config: tt.config})
			// The budget cases get a timeout no busy machine reaches first;
			// the cases that lift the work budget end at 2 s.
			timeout := 120000
			if tt.config != nil {
				timeout = 2000
			}
			out := e.sequence(map[string]any{"timeout_ms": timeout, "steps": []any{set30k, map[string]any{"assert": tt.assert}}})
			if out.Passed || !strings.Contains(out.Error, tt.want) {
				t.Errorf("passed %v, error %q; want an error naming %q", out.Passed, out.Error, tt.want)
			}
			if got := e.sequence(map[string]any{"steps": []any{map[string]any{"send": "version", "expect": "hilrun"}}}); !got.Passed {
				t.Errorf("the next call: %+v", got)
			}
		})
	}
}

// env in expressions is empty for what a client runs: the names of the
// server's environment variables are not the client's to read.
func TestExprEnvEmptyOverMCP(t *testing.T) {
	t.Setenv("HILRUN_MCP_TOKEN", "not-for-clients")
	e := newEnv(t, envOptions{sim: true})
	out := e.sequence(map[string]any{"steps": []any{
		map[string]any{"set": map[string]any{"names": map[string]any{"expr": `join(keys(env), ",")`}}},
		map[string]any{"assert": `names == "" && len(env) == 0`},
	}})
	if !out.Passed {
		t.Errorf("expressions see the server's environment: %s %s %s", statuses(out), out.Error, text2(out))
	}
}

// Aliases that copy a large anchor many times are refused, in files and
// in steps given as a YAML string, and the next call works.
func TestAliasBytesOverMCP(t *testing.T) {
	big := strings.Repeat("x", 1<<20)
	e := newEnv(t, envOptions{sim: true})
	var v validateResult
	decode(t, e.call("validate_sequence", map[string]any{"content": "vars:\n  big: &b " + big + "\nsteps:\n" + strings.Repeat("  - {send: *b}\n", 3000)}), &v)
	if v.Valid || len(v.Errors) != 1 || !strings.Contains(v.Errors[0].Message, "more than 4 MiB of text (the alias expansion limit)") {
		t.Errorf("validate_sequence: %+v", v)
	}
	msg := e.callErr("serial_sequence", map[string]any{"steps": "- {set: {big: &b " + big + "}}\n" + strings.Repeat("- {set: {c: *b}}\n", 4000)})
	if !strings.Contains(msg, "steps:6:13: aliases expand the document by more than 4 MiB of text (the alias expansion limit)") {
		t.Errorf("serial_sequence with steps as a YAML string: %s", msg)
	}
	if got := e.sequence(map[string]any{"steps": []any{map[string]any{"send": "version", "expect": "hilrun"}}}); !got.Passed {
		t.Errorf("the next call: %+v", got)
	}
}

package mcpserver

import (
	"strings"
	"testing"
)

// TestSerialSequenceMatrix runs matrices given to serial_sequence, on a
// group and on a whole sequence mapping: each case runs with its values
// and is named in the result, and a failing case does not stop the next.
func TestSerialSequenceMatrix(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	conn := e.open(nil)
	out := e.sequence(map[string]any{"on_failure": "stop", "steps": []any{
		map[string]any{"group": "echo", "tags": []any{"smoke"},
			"matrix": map[string]any{"baud": []any{9600, 115200}, "fw": []any{"2.4.1", "2.5.0"}, "exclude": []any{map[string]any{"baud": 9600, "fw": "2.5.0"}}},
			"steps": []any{
				map[string]any{"send": "echo b=${baud} f=${fw}", "to": conn, "expect": "b=${baud} f=${fw}"},
				map[string]any{"assert": `fw != "2.4.1" || baud == 9600`},
			}},
	}})
	groups := map[string]string{}
	for _, st := range out.Steps {
		if st.Kind == "group" {
			groups[st.Name] = string(st.Status)
		}
	}
	want := map[string]string{"echo[baud=9600,fw=2.4.1]": "passed", "echo[baud=115200,fw=2.4.1]": "failed", "echo[baud=115200,fw=2.5.0]": "passed"}
	if len(groups) != len(want) {
		t.Fatalf("cases %v, want %v", groups, want)
	}
	for name, status := range want {
		if groups[name] != status {
			t.Errorf("case %s: %q, want %q (all: %v)", name, groups[name], status, groups)
		}
	}
	if !strings.Contains(out.Result, "echo[baud=115200,fw=2.5.0]") {
		t.Errorf("the text report does not name the last case:\n%s", out.Result)
	}

	// A whole sequence mapping with a matrix: one group per case, named
	// after the sequence.
	out = e.sequence(map[string]any{"steps": map[string]any{
		"name":   "check",
		"matrix": map[string]any{"word": []any{"alpha", "beta"}},
		"steps":  []any{map[string]any{"send": "echo ${word}", "to": conn, "expect": "${word}"}},
	}})
	if !out.Passed || out.Counts.Passed != 2 || len(out.Steps) != 4 {
		t.Fatalf("status %s: %s", out.Status, statuses(out))
	}
	if out.Steps[1].Name != "check[word=alpha]" || out.Steps[3].Name != "check[word=beta]" {
		t.Errorf("the cases are named %q and %q, want check[word=alpha] and check[word=beta]", out.Steps[1].Name, out.Steps[3].Name)
	}
}

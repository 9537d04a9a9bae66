package mcpserver

import (
	"errors"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/steps"
)

// Two branches of a parallel: step may not reach one connection under
// two names (its label and its id, or its port): the call is refused
// before anything runs, at the JSON pointer of the second branch's step.
func TestSequenceBranchesShareAConnection(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.open(map[string]any{"label": "dut"})
	for _, other := range []string{id, e.board.SerialPath()} {
		msg := e.callErr("serial_sequence", map[string]any{"steps": []any{
			map[string]any{"parallel": map[string]any{
				"a": []any{map[string]any{"send": "echo a", "to": "dut"}},
				"b": []any{
					map[string]any{"delay": "1ms"},
					map[string]any{"send": "echo b", "to": other},
				},
			}},
		}})
		if !strings.Contains(msg, "serial_sequence: /steps/0/parallel/b/1") || !strings.Contains(msg, "branch a") || !strings.Contains(msg, "dut") {
			t.Errorf("to: %s in branch b, dut in branch a: %s", other, msg)
		}
	}
	// One name in one branch, another name of another connection in the
	// other, is fine.
	res := e.sequence(map[string]any{"steps": []any{
		map[string]any{"parallel": map[string]any{
			"a": []any{map[string]any{"send": "echo a", "to": "dut", "expect": "a"}},
			"b": []any{map[string]any{"delay": "1ms"}},
		}},
	}})
	if !res.Passed {
		t.Errorf("one branch on the connection: %s", res.Result)
	}
}

// Two probes bound to one debugger are one probe: two branches may not
// use them; a file's error names the step by line and column.
func TestBranchOwnersProbes(t *testing.T) {
	seq, err := steps.Parse("two.yaml", []byte(`probes:
  p1: {openocd: "127.0.0.1:4444"}
  p2: {openocd: "127.0.0.1:4444"}
  p3: {openocd: "127.0.0.1:4445"}
steps:
  - parallel:
      a: [{mem_read: true, address: "0x20000000", probe: p1}]
      b: [{mem_read: true, address: "0x20000000", probe: p3}, {mem_read: true, address: "0x20000000", probe: p2}]
`), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{}
	err = s.checkBranchOwners(seq, nil)
	if err == nil || !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), "two.yaml:8:63: branch b uses the debugger at openocd 127.0.0.1:4444 as probe p2, which branch a uses as probe p1") {
		t.Errorf("p1 and p2 in two branches: %v", err)
	}
}

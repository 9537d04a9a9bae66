package mcpserver

import (
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/sim"
)

// A console opened with prompt and echo keeps them for the sequences that
// borrow it: a send's expect starts after the echo of its command (so
// "woke" does not match "sleep 300; echo woke" as typed) and ends at the
// next prompt (so a pattern the command never prints fails at once, not at
// its timeout).
func TestSerialSequenceHonoursPromptAndEcho(t *testing.T) {
	e := newEnv(t, envOptions{})
	b := sim.New(sim.Options{Echo: true})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	var op openResult
	decode(t, e.call("serial_open", map[string]any{"port": b.SerialPath(), "label": "dut", "prompt": "sim> ", "echo": true}), &op)
	if op.Prompt != "sim> " || !op.Echo {
		t.Errorf("serial_open: %+v, want the prompt and echo back", op)
	}

	var res sequenceResult
	decode(t, e.call("serial_sequence", map[string]any{"steps": []any{
		map[string]any{"send": "", "to": "dut"},
		map[string]any{"send": "sleep 300; echo woke", "to": "dut", "expect": "woke", "timeout": "60s"},
	}}), &res)
	if !res.Passed || len(res.Steps) != 2 {
		t.Fatalf("sequence: %+v", res)
	}
	st := res.Steps[1]
	reply, ok := st.Data["reply"].(float64)
	if !ok {
		t.Fatalf("the send did not wait for its echo: %+v", st.Data)
	}
	if off := st.Data["offset"].(float64); off < reply {
		t.Errorf("matched at %v, inside the echo that ends at %v", off, reply)
	}

	decode(t, e.call("serial_sequence", map[string]any{"steps": []any{
		map[string]any{"send": "echo hello", "to": "dut", "expect": "never printed", "timeout": "60s"},
	}}), &res)
	if res.Passed || len(res.Steps) != 1 || !strings.Contains(res.Steps[0].Message, "back at its prompt") {
		t.Errorf("an expect past the prompt: %+v", res.Steps)
	}

	if msg := e.callErr("serial_open", map[string]any{"port": e.board.SerialPath(), "prompt": map[string]any{"regex": "("}}); !strings.Contains(msg, "prompt") {
		t.Errorf("a bad prompt regexp: %s", msg)
	}
	// The portable spelling: text with prompt_regex, read as a regexp.
	if msg := e.callErr("serial_open", map[string]any{"port": e.board.SerialPath(), "prompt": "(", "prompt_regex": true}); !strings.Contains(msg, "prompt") {
		t.Errorf("a bad prompt regexp given as prompt_regex: %s", msg)
	}
}

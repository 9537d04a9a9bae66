package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/steps"
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

// Write, then read a capture window, the habit of agents written for the
// serial MCP servers: the reply that arrived between the write and the
// window is in the window, and no later read skips it.
func TestReadWindowAfterWriteLosesNothing(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	conn := e.open(nil)
	var r readResult
	decode(t, e.call("serial_read", map[string]any{"connection": conn}), &r)
	e.call("serial_write", map[string]any{"connection": conn, "data": "echo window-reply\n"})
	// Wait until the board has answered, so the reply is buffered before
	// the window opens (the old code started the window after it).
	waitFor(t, "the reply to arrive", func() bool {
		var st statusResult
		decode(t, e.call("serial_status", map[string]any{"connection": conn}), &st)
		return st.Connections[0].Cursor >= r.Cursor+int64(len("window-reply\r\nsim> "))
	})
	decode(t, e.call("serial_read", map[string]any{"connection": conn, "duration_ms": 300}), &r)
	if !strings.Contains(r.Data, "window-reply\r\n") {
		t.Fatalf("the capture window lacks the reply that arrived before it: %q (reason %s)", r.Data, r.Reason)
	}
	e.call("serial_write", map[string]any{"connection": conn, "data": "echo second\n"})
	decode(t, e.call("serial_read", map[string]any{"connection": conn, "timeout_ms": 20000}), &r)
	if strings.Contains(r.Data, "window-reply") {
		t.Errorf("the next read returned the reply again: %q", r.Data)
	}
}

// A capture window that waits for its first byte ends on a silent device,
// with reason no_data, instead of waiting for ever.
func TestReadWindowOnASilentDeviceEnds(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	conn := e.open(nil)
	var r readResult
	decode(t, e.call("serial_read", map[string]any{"connection": conn}), &r)
	decode(t, e.call("serial_read", map[string]any{"connection": conn, "duration_ms": 200}), &r)
	if r.Bytes != 0 || r.Reason != "no_data" {
		t.Errorf("got %d bytes, reason %s; want none, no_data", r.Bytes, r.Reason)
	}
}

// The devices of the server's bench file work by name wherever a device
// name is accepted: a step's to:, a step without to:, and serial_open.
func TestBenchDevicesByName(t *testing.T) {
	e := newEnv(t, envOptions{})
	path := filepath.Join(t.TempDir(), "hilrun.bench.yaml")
	if err := os.WriteFile(path, []byte("devices:\n  dut: {port: "+e.board.SerialPath()+", line_ending: lf}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := steps.LoadBench(files.Anywhere(), path)
	if err != nil {
		t.Fatal(err)
	}
	e.srv.cfg.Bench = b
	step := map[string]any{"send": "echo by-name", "expect": "by-name"}
	if out := e.sequence(map[string]any{"steps": []any{withTo(step, "dut")}}); !out.Passed {
		t.Errorf("to: dut: %s %s", statuses(out), out.Error)
	}
	if out := e.sequence(map[string]any{"steps": []any{step}}); !out.Passed {
		t.Errorf("no to:, the bench's only device: %s %s", statuses(out), out.Error)
	}
	var opened openResult
	decode(t, e.call("serial_open", map[string]any{"port": "dut"}), &opened)
	if opened.Label != "dut" || opened.Port != e.board.SerialPath() || opened.LineEnding != "lf" {
		t.Errorf("serial_open port=dut: %+v", opened)
	}
	if out := e.sequence(map[string]any{"steps": []any{withTo(step, "dut")}}); !out.Passed {
		t.Errorf("to: dut with the connection open: %s %s", statuses(out), out.Error)
	}
}

func withTo(step map[string]any, to string) map[string]any {
	m := map[string]any{"to": to}
	for k, v := range step {
		m[k] = v
	}
	return m
}

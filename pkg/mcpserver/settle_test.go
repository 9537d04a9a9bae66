package mcpserver

import (
	"strings"
	"testing"
)

// serial_expect does not return a regex match that more output could
// still change: a number printed in two parts with a pause between is
// returned whole. settle_ms 0 returns what has arrived.
func TestSerialExpectHoldsGrowingMatch(t *testing.T) {
	e := newEnv(t, envOptions{})
	var op openResult
	decode(t, e.call("serial_open", map[string]any{"port": e.board.SerialPath(), "line_ending": "lf"}), &op)
	e.call("serial_expect", map[string]any{"connection": op.ConnectionID, "pattern": "sim> ", "cursor": 0})

	var w writeResult
	var ex expectResult
	decode(t, e.call("serial_write", map[string]any{"connection": op.ConnectionID, "data": "echo -n adc=; echo -n 40; sleep 300; echo 95", "newline": true}), &w)
	decode(t, e.call("serial_expect", map[string]any{"connection": op.ConnectionID, "pattern": `adc=(?P<adc>\d+)`, "regex": true,
		"cursor": w.Cursor, "settle_ms": 60000, "timeout_ms": 60000}), &ex)
	if !ex.Matched || ex.Named["adc"] != "4095" {
		t.Errorf("expect: %+v, want adc 4095", ex)
	}

	decode(t, e.call("serial_write", map[string]any{"connection": op.ConnectionID, "data": "echo -n adc=; echo -n 40; sleep 600000", "newline": true}), &w)
	decode(t, e.call("serial_expect", map[string]any{"connection": op.ConnectionID, "pattern": `adc=(?P<adc>\d+)`, "regex": true,
		"cursor": w.Cursor, "settle_ms": 0, "timeout_ms": 60000}), &ex)
	if !ex.Matched || ex.Named["adc"] != "40" {
		t.Errorf("expect with settle_ms 0: %+v, want adc 40", ex)
	}
	e.call("serial_write", map[string]any{"connection": op.ConnectionID, "data": "03", "encoding": "hex"})

	if msg := e.callErr("serial_expect", map[string]any{"connection": op.ConnectionID, "pattern": "x", "settle_ms": 70000}); !strings.Contains(msg, "settle_ms") {
		t.Errorf("settle_ms 70000: %s", msg)
	}
}

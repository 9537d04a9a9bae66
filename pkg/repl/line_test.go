package repl

import (
	"path/filepath"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/files"
)

func TestTranslate(t *testing.T) {
	tests := []struct {
		name, line, want string
	}{
		{"send", "send echo hi", `{send: "echo hi"}`},
		{"expect", "expect OK", `{expect: "OK"}`},
		{"expect with timeout", "expect boot done 10s", `{expect: "boot done", timeout: 10s}`},
		{"delay", "delay 100ms", `{delay: "100ms"}`},
		{"capture", "capture 2s", `{capture: "2s"}`},
		{"mdw", "mdw 0x20000000 4", `{mem_read: 0x20000000, count: 4}`},
		{"mww", "mww 0x20000000 7", `{mem_write: 0x20000000, value: 7}`},
		{"read", "read counter", `{mem_read: true, symbol: "counter"}`},
		{"write", "write counter 3", `{mem_write: true, symbol: "counter", value: 3}`},
		{"reset", "reset", `{reset: run}`},
		{"reset sequence", "reset_sequence esp32", `{reset_sequence: "esp32"}`},
		{"break", "break 250ms", `{break: "250ms"}`},
		{"snap", "snap led", `{capture: true, label: "led"}`},
		{"snap without label", "snap", `{capture: true}`},
		{"exec", "exec uhubctl -a cycle -p 2", `{exec: ["uhubctl", "-a", "cycle", "-p", "2"]}`},
		{"power", "power cycle dut", `{power: {device: "dut", action: "cycle"}}`},
		{"flow form", "{send: AT, expect: OK}", `{send: AT, expect: OK}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := translate(tt.line)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("translate(%q) = %s, want %s", tt.line, got, tt.want)
			}
		})
	}
	if _, err := translate("sned x"); err == nil {
		t.Error("an unknown command was accepted")
	}
}

func TestStepNodesAddsDevice(t *testing.T) {
	for in, want := range map[string]string{
		`{send: AT}`:                      "{send: AT, to: modem}",
		`{reset_sequence: esp32}`:         "{reset_sequence: esp32, to: modem}",
		`{capture: 2s}`:                   "{capture: 2s, to: modem}",
		`{capture: true, label: "x"}`:     `{capture: true, label: "x"}`,
		`{expect_image: {brightness: 0}}`: "{expect_image: {brightness: 0}}",
		`{mem_read: 0x20000000}`:          "{mem_read: 0x20000000}",
	} {
		nodes, err := stepNodes(in, "modem", true)
		if err != nil {
			t.Fatal(err)
		}
		if got := flow(nodes[0]); got != want {
			t.Errorf("%s: got %s, want %s", in, got, want)
		}
	}
}

func TestHistoryBoundedAndSaved(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history")
	h := LoadHistory(files.Anywhere(), path, 2)
	for _, l := range []string{"a", "b", "b", "c"} {
		h.Add(l)
	}
	if err := h.Save(); err != nil {
		t.Fatal(err)
	}
	h = LoadHistory(files.Anywhere(), path, 2)
	if h.Len() != 2 || h.At(0) != "c" || h.At(1) != "b" {
		t.Errorf("history = %d lines, newest %q", h.Len(), h.At(0))
	}
}

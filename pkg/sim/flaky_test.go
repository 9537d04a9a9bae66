package sim

import (
	"strings"
	"testing"
)

func TestFlaky(t *testing.T) {
	_, c := boot(t, Options{})
	reply := func(in string) string {
		t.Helper()
		c.send(in + "\r")
		return strings.TrimSuffix(c.until("sim> "), "sim> ")
	}
	for i, want := range []string{"FAIL adc (call 1)\r\n", "FAIL adc (call 2)\r\n", "OK adc (call 3)\r\n", "OK adc (call 4)\r\n"} {
		if got := reply("flaky adc 2"); got != want {
			t.Fatalf("call %d: reply %q, want %q", i+1, got, want)
		}
	}
	if got := reply("flaky other 0"); got != "OK other (call 1)\r\n" {
		t.Errorf("a name of its own counts its own calls: got %q", got)
	}
	// A reboot does not make the function fail again: only reset does.
	reply("reboot")
	if got := reply("flaky adc 2"); !strings.HasPrefix(got, "OK adc") {
		t.Errorf("after reboot: %q, want OK", got)
	}
	if got := reply("flaky reset"); got != "flaky: reset\r\n" {
		t.Errorf("reset: %q", got)
	}
	if got := reply("flaky adc 2"); got != "FAIL adc (call 1)\r\n" {
		t.Errorf("after reset: %q, want the first call again", got)
	}
	for _, bad := range []string{"flaky", "flaky adc", "flaky adc x", "flaky adc -1"} {
		if got := reply(bad); !strings.HasPrefix(got, "usage: flaky") {
			t.Errorf("%q: %q, want the usage", bad, got)
		}
	}
}

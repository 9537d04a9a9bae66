package sim

import (
	"testing"
	"time"
)

// TestRealtimeRx: with RealtimeRx the board reads, answers and stamps
// lines as without it (whether or not the process may raise the reader's
// priority), and Close ends the reader.
func TestRealtimeRx(t *testing.T) {
	opts := Options{RealtimeRx: true}
	b, c := boot(t, opts)
	before := time.Now()
	c.send("echo one\r")
	c.expect("one\r\n" + promptFor(opts))
	c.send("echo two\r")
	c.expect("two\r\n" + promptFor(opts))
	var got []string
	for _, l := range b.Received() {
		got = append(got, l.Line)
		if l.At.Before(before) && l.Line != "" {
			t.Errorf("line %q stamped %s before it was sent", l.Line, before.Sub(l.At))
		}
	}
	if len(got) != 2 || got[0] != "echo one" || got[1] != "echo two" {
		t.Errorf("the board received %q, want the two lines", got)
	}
	done := make(chan error, 1)
	go func() { done <- b.Close() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return within 10 s: the reader did not stop")
	}
}

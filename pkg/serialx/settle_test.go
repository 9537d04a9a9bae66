package serialx

import (
	"bufio"
	"context"
	"fmt"
	"strings"
	"testing"
)

// TestCloseSendsWhatWasWritten: a console closed right after a write
// (the last send of a sequence, with no expect) does not discard it: the
// device receives every line, in order.
func TestCloseSendsWhatWasWritten(t *testing.T) {
	d := newDevice(t)
	const n = 200
	got := make(chan []string, 1)
	go func() {
		var lines []string
		sc := bufio.NewScanner(d.master)
		for sc.Scan() {
			line := strings.TrimRight(sc.Text(), "\r")
			if line == "end" {
				break
			}
			lines = append(lines, line)
		}
		got <- lines
	}()
	for i := range n {
		c := d.open(Config{Devices: anyDevice, Dial: anyAddr})
		if _, err := c.Write(context.Background(), fmt.Appendf(nil, "line %d\n", i)); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatalf("Close: %v", err)
		}
	}
	// The end mark comes through a console still open, which nothing
	// can have discarded.
	last := d.open(Config{Devices: anyDevice, Dial: anyAddr})
	if _, err := last.Write(context.Background(), []byte("end\n")); err != nil {
		t.Fatal(err)
	}
	lines := <-got
	for i := range n {
		if len(lines) != n || lines[i] != fmt.Sprintf("line %d", i) {
			t.Fatalf("the device received %d lines, line %d %q; want every line written before Close, in order:\n%s", len(lines), i, at(lines, i), strings.Join(lines, "\n"))
		}
	}
}

func at(lines []string, i int) string {
	if i < len(lines) {
		return lines[i]
	}
	return "(none)"
}

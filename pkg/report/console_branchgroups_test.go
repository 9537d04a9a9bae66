package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
)

// Each branch heads its own groups, however the branches' steps
// interleave: a group's header is printed once in its branch, prefixed
// with the branch's name, and a group of another branch in between does
// not head it again.
func TestConsoleBranchGroupHeaders(t *testing.T) {
	ms := time.Millisecond
	seq := runner.SequenceResult{
		Name: "tags", File: "seq/tags.yaml", Status: runner.Passed, StartedAt: base, Duration: 10 * ms,
		Steps: []runner.StepResult{
			{Path: "0.a.0.0", Kind: "send", Name: "a1", Group: "ga", Branch: "a", Status: runner.Passed, Started: 1 * ms},
			{Path: "0.b.0.0", Kind: "send", Name: "b1", Group: "gb", Branch: "b", Status: runner.Passed, Started: 1 * ms},
			{Path: "0.a.0.1", Kind: "send", Name: "a2", Group: "ga", Branch: "a", Status: runner.Passed, Started: 2 * ms},
			{Path: "0.b.0.1", Kind: "send", Name: "b2", Group: "gb", Branch: "b", Status: runner.Passed, Started: 2 * ms},
			{Path: "0.a.0", Kind: "group", Name: "ga", Group: "ga", Branch: "a", Status: runner.Passed, Started: 1 * ms, Tags: []string{"x"}},
			{Path: "0.b.0", Kind: "group", Name: "gb", Group: "gb", Branch: "b", Status: runner.Passed, Started: 1 * ms, Tags: []string{"y"}},
			{Path: "0.b.1", Kind: "send", Name: "b3", Branch: "b", Status: runner.Passed, Started: 3 * ms},
			{Path: "0.a", Kind: "branch", Name: "a", Branch: "a", Status: runner.Passed, Started: 1 * ms},
			{Path: "0.b", Kind: "branch", Name: "b", Branch: "b", Status: runner.Passed, Started: 1 * ms},
			{Path: "0", Kind: "parallel", Name: "pair", Status: runner.Passed, Started: 1 * ms,
				Data: map[string]any{"branches": []any{"a", "b"}}},
		},
	}
	for j := range seq.Steps {
		seq.Steps[j].Index = j
	}
	var out bytes.Buffer
	c := NewConsole(&out, ConsoleOptions{Now: fakeClock(base, time.Second)})
	for _, e := range events(seq) {
		c.Event(e)
	}
	text := out.String()
	for _, h := range []string{"[a] ▸ ga", "[b] ▸ gb"} {
		if n := strings.Count(text, h); n != 1 {
			t.Errorf("header %q printed %d times:\n%s", h, n, text)
		}
	}
	if strings.Contains(text, "] ▸ ga\n") && strings.Count(text, "▸") != 2 {
		t.Errorf("more group headers than the branches' two groups:\n%s", text)
	}
}

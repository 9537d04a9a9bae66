package mcpserver

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// TestSizeBound checks that sizeBound is never below a step's JSON length,
// for the strings JSON makes longest (control bytes, quotes, invalid
// UTF-8) and the widest numbers.
func TestSizeBound(t *testing.T) {
	worst := strings.Repeat("\x01\"\\<\xff\u2028", 50)
	steps := []results.Step{
		{},
		{StepBase: results.StepBase{Index: math.MaxInt, Path: worst, Kind: worst, Name: worst, Group: worst, Status: runner.Interrupted,
			StartedMS: results.Millis(math.MaxFloat64), DurationMS: results.Millis(-math.MaxFloat64), Message: worst, Expected: worst, Received: worst,
			Attachments: []string{worst, worst, ""}, File: worst, Line: math.MinInt, Column: math.MaxInt}},
		{StepBase: results.StepBase{Name: "x", Saved: map[string]any{"v": worst}, Data: map[string]any{"d": 1}}},
		{StepBase: results.StepBase{Name: "r"}, Repeat: &results.Repeat{Iterations: 3}},
	}
	for i := range steps {
		b, err := json.Marshal(&steps[i])
		if err != nil {
			t.Fatal(err)
		}
		if got := sizeBound(&steps[i]); got < len(b)+1 {
			t.Errorf("step %d: sizeBound %d, below its JSON's %d bytes", i, got, len(b)+1)
		}
	}
	// withinBytes keeps everything below the limit without measuring, and
	// measures above it.
	if got := withinBytes(steps, 1<<20); len(got) != len(steps) {
		t.Errorf("withinBytes kept %d of %d steps below the limit", len(got), len(steps))
	}
	if got := withinBytes(steps, 600); len(got) == 0 || len(got) == len(steps) {
		t.Errorf("withinBytes kept %d of %d steps with a limit of 600 bytes", len(got), len(steps))
	}
}

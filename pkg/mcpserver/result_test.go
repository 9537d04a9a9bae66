package mcpserver

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
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
		{StepBase: results.StepBase{Name: "x", Saved: map[string]any{"v": worst, worst: true}, Data: map[string]any{"d": 1, "u": uint64(math.MaxUint64), "i": math.MinInt64, "f": -math.MaxFloat64, "n": json.Number("12345678901234567890123"), "z": nil}}},
		{StepBase: results.StepBase{Name: "nested", Data: map[string]any{"list": []any{worst, map[string]any{worst: worst}}}}},
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

// TestSequenceResultString checks serial_sequence's result string, the
// STM32 debug server's report: it is the tool's text, and it says what the
// structured fields say.
func TestSequenceResultString(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	conn := e.open(nil)
	res := e.call("serial_sequence", map[string]any{"steps": []any{
		map[string]any{"send": "echo one", "expect": "one", "to": conn},
		map[string]any{"delay_ms": 1},
		map[string]any{"send": "echo two", "expect": "never printed", "timeout": "200ms", "to": conn},
		map[string]any{"mem_read": true, "address": "0x48000014", "label": "odr"},
	}})
	var out sequenceResult
	decode(t, res, &out)
	if out.Result == "" || out.Result != text(res) {
		t.Fatalf("result %q, want the tool's text %q", out.Result, text(res))
	}
	lines := strings.Split(out.Result, "\n")
	if lines[0] != "run "+out.RunID+": "+out.Name {
		t.Errorf("first line %q", lines[0])
	}
	// A line per step, in the order of steps, with its status and kind.
	at := 1
	for _, st := range out.Steps {
		for at < len(lines) && !strings.HasPrefix(lines[at], strconv.Itoa(st.Index)+" ") {
			at++
		}
		if at == len(lines) {
			t.Fatalf("no line for step %d (%s %s) in order:\n%s", st.Index, st.Status, st.Kind, out.Result)
		}
		if f := strings.Fields(lines[at]); len(f) < 3 || f[1] != string(st.Status) || f[2] != st.Kind {
			t.Errorf("step %d: line %q, want status %s and kind %s", st.Index, lines[at], st.Status, st.Kind)
		}
		at++
	}
	c := out.Counts
	want := fmt.Sprintf("FAILED: %d/%d passed, %d failed in ", c.Passed, c.Total, c.Failed)
	if out.Passed || c.Total != 4 || c.Failed != 1 || !strings.Contains(out.Result, "\n"+want) {
		t.Errorf("counts %+v; want the summary line %q in:\n%s", c, want, out.Result)
	}
	if !strings.Contains(out.Result, "\nreport: "+out.ReportResource) {
		t.Errorf("the result does not name the report %s:\n%s", out.ReportResource, out.Result)
	}
	// A passing run.
	decode(t, e.call("serial_sequence", map[string]any{"steps": []any{map[string]any{"send": "echo three", "expect": "three", "to": conn}}}), &out)
	if !out.Passed || !strings.Contains(out.Result, "\npassed 1/1 in ") {
		t.Errorf("a passing run's result:\n%s", out.Result)
	}
}

// TestReportWrittenWhenRead checks that a run's JSON report is written
// from its event file when the report resource is first read, not by the
// call, and says what the result says.
func TestReportWrittenWhenRead(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	conn := e.open(nil)
	out := e.sequence(map[string]any{"steps": []any{
		map[string]any{"send": "echo one", "expect": "one", "to": conn},
		map[string]any{"send": "echo two", "expect": "never printed", "timeout": "200ms", "to": conn},
	}})
	file := filepath.Join(e.srv.LogDir(), "runs", out.RunID, "report.json")
	if _, err := os.Stat(file); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("report.json is there before anyone read it (%v)", err)
	}
	var rep struct {
		Passed    bool `json:"passed"`
		Sequences []struct {
			Status string         `json:"status"`
			Counts results.Counts `json:"counts"`
			Steps  []struct {
				Status string `json:"status"`
			} `json:"steps"`
		} `json:"sequences"`
	}
	for i := 0; i < 2; i++ {
		text := e.readResource(out.ReportResource)
		if err := json.Unmarshal([]byte(text), &rep); err != nil {
			t.Fatalf("read %d of the report: %v\n%s", i, err, text)
		}
		if rep.Passed || len(rep.Sequences) != 1 || rep.Sequences[0].Counts != out.Counts || rep.Sequences[0].Status != out.Status || len(rep.Sequences[0].Steps) != len(out.Steps) {
			t.Errorf("read %d: the report says %+v, the result %+v", i, rep, out)
		}
	}
	if _, err := os.Stat(file); err != nil {
		t.Errorf("report.json after a read: %v", err)
	}
}

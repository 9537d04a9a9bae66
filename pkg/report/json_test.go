package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"testing"
	"unicode/utf8"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

func TestJSONGolden(t *testing.T) {
	var out bytes.Buffer
	if err := WriteJSON(&out, eventFile(t, fixture()), results.Options{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.golden.json", out.Bytes())
}

func TestJSONShape(t *testing.T) {
	var out bytes.Buffer
	if err := WriteJSON(&out, eventFile(t, fixture()), results.Options{}); err != nil {
		t.Fatal(err)
	}
	if !utf8.Valid(out.Bytes()) {
		t.Error("report is not valid UTF-8")
	}
	var doc struct {
		Passed    bool `json:"passed"`
		Sequences []struct {
			Status     string  `json:"status"`
			DurationMS float64 `json:"duration_ms"`
			Steps      []struct {
				Status    string         `json:"status"`
				StartedMS float64        `json:"started_ms"`
				Saved     map[string]any `json:"saved"`
			} `json:"steps"`
		} `json:"sequences"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Passed {
		t.Error("passed = true for a run with failures")
	}
	var statuses []string
	for _, s := range doc.Sequences {
		statuses = append(statuses, s.Status)
	}
	if got, want := statuses, []string{"passed", "failed", "error", "error", "error", "failed"}; !equal(got, want) {
		t.Errorf("statuses = %q, want %q", got, want)
	}
	if got := doc.Sequences[0].DurationMS; got != 1234.567 {
		t.Errorf("duration_ms = %v, want 1234.567", got)
	}
	if got := doc.Sequences[0].Steps[3].Saved["raw"]; got != `v1.2.3\x1b[0m\r\n\\` {
		t.Errorf("saved bytes = %q", got)
	}
	if doc.Sequences[4].Steps == nil {
		t.Error(`a sequence without steps has "steps": null, want []`)
	}
}

func TestJSONPassed(t *testing.T) {
	tests := []struct {
		name     string
		statuses []runner.Status
		want     bool
	}{
		{"no sequences", nil, false},
		{"all passed", []runner.Status{runner.Passed, runner.Passed}, true},
		{"one failed", []runner.Status{runner.Passed, runner.Failed}, false},
		{"interrupted", []runner.Status{runner.Interrupted}, false},
		{"skipped", []runner.Status{runner.Skipped}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var seqs []runner.SequenceResult
			for _, st := range tt.statuses {
				seqs = append(seqs, runner.SequenceResult{Name: "s", Status: st})
			}
			var out bytes.Buffer
			if err := WriteJSON(&out, eventFile(t, seqs), results.Options{}); err != nil {
				t.Fatal(err)
			}
			var doc struct {
				Passed    bool              `json:"passed"`
				Sequences []json.RawMessage `json:"sequences"`
			}
			if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
				t.Fatal(err)
			}
			if doc.Passed != tt.want {
				t.Errorf("passed = %v, want %v", doc.Passed, tt.want)
			}
			if doc.Sequences == nil {
				t.Error(`"sequences" is null, want []`)
			}
		})
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestJSONCutShort reads an event file that ends before its sequence did,
// as after a kill or a full disk: the report still parses, keeps the steps
// recorded, and says the sequence did not end.
func TestJSONCutShort(t *testing.T) {
	for _, mid := range []bool{false, true} {
		t.Run(fmt.Sprintf("inside a record %v", mid), func(t *testing.T) { testCutShort(t, mid) })
	}
}

func testCutShort(t *testing.T, midRecord bool) {
	path := eventFile(t, fixture()[:1])
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(bytes.TrimSuffix(data, []byte("\n")), []byte("\n"))
	cut := bytes.Join(lines[:len(lines)-1], nil)
	if midRecord {
		// Half of the end record, as a full disk leaves it.
		last := lines[len(lines)-1]
		cut = append(cut, last[:len(last)/2]...)
	}
	if err := os.WriteFile(path, cut, 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := WriteJSON(&out, path, results.Options{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Passed    bool
		Sequences []struct {
			Name, Status, Error string
			Steps               []json.RawMessage
		}
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out.Bytes())
	}
	s := doc.Sequences[0]
	if doc.Passed || s.Name != "boot check" || s.Status != "error" || s.Error != results.CutShort || len(s.Steps) != 11 {
		t.Errorf("passed %v, sequence %s %s %q with %d steps", doc.Passed, s.Name, s.Status, s.Error, len(s.Steps))
	}
	// The JUnit report too stays well-formed and says so.
	var x bytes.Buffer
	if err := WriteJUnit(&x, path, JUnitOptions{}); err != nil {
		t.Fatal(err)
	}
	suites := parseJUnit(t, x.Bytes())
	if n := len(suites.Suites[0].Testcases); n != 8 || suites.Errors != 1 {
		t.Errorf("%d testcases, %d errors:\n%s", n, suites.Errors, x.Bytes())
	}
}

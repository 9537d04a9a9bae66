package report

import (
	"bytes"
	"encoding/json"
	"math"
	"net"
	"testing"
	"unicode/utf8"

	"github.com/hilrun/hilrun/pkg/runner"
)

func TestJSONGolden(t *testing.T) {
	var out bytes.Buffer
	if err := WriteJSON(&out, fixture()); err != nil {
		t.Fatal(err)
	}
	golden(t, "report.golden.json", out.Bytes())
}

func TestJSONShape(t *testing.T) {
	var out bytes.Buffer
	if err := WriteJSON(&out, fixture()); err != nil {
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
	if got, want := statuses, []string{"passed", "failed", "error", "error", "error"}; !equal(got, want) {
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
			var results []runner.SequenceResult
			for _, st := range tt.statuses {
				results = append(results, runner.SequenceResult{Name: "s", Status: st})
			}
			var out bytes.Buffer
			if err := WriteJSON(&out, results); err != nil {
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

func TestJSONValue(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{"bytes", []byte("a\x00\xff\\é\n"), `"a\\x00\\xff\\\\é\\n"`},
		{"byte array", [3]byte{'o', 'k', 0x1b}, `"ok\\x1b"`},
		{"named bytes", json.RawMessage(`{"a":1}`), `{"a":1}`},
		{"text marshaler", net.IPv4(10, 0, 0, 1), `"10.0.0.1"`},
		{"nested", map[string]any{"l": []any{[]byte("x\r"), 1}}, `{"l":["x\\r",1]}`},
		{"typed map", map[string][]byte{"k": []byte("\x07")}, `{"k":"\\x07"}`},
		{"slice of byte slices", [][]byte{[]byte("a"), []byte("\x01")}, `["a","\\x01"]`},
		{"ints", []uint64{1, 2}, `[1,2]`},
		{"nan", math.NaN(), `"NaN"`},
		{"inf", []float64{math.Inf(1), 1.5}, `["+Inf",1.5]`},
		{"string", "keep \x1b as JSON escapes it", `"keep \u001b as JSON escapes it"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(jsonValue(tt.in))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
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

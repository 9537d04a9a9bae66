package report

import (
	"bytes"
	"encoding/csv"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
)

func measureStep(i int, path, name string, m runner.Measurement) runner.StepResult {
	st := runner.Passed
	if m.Outcome == "" {
		m.Outcome = runner.Passed
	}
	if m.Outcome != runner.Passed {
		st = runner.Failed
	}
	return runner.StepResult{Index: i, Path: path, Kind: "measure", Name: name, Status: st,
		Started: time.Duration(i) * time.Millisecond, Duration: 100 * time.Microsecond, Measurement: &m}
}

func float(f float64) *float64 { return &f }

// TestMeasurementsCSVFormulas checks that a text cell a spreadsheet would
// run as a formula gets a leading quote, and that numbers, negative ones
// and text that is a plain number included, stay as they are.
func TestMeasurementsCSVFormulas(t *testing.T) {
	seq := runner.SequenceResult{Name: "=sequence", File: "seq/formula.yaml", Status: runner.Failed, StartedAt: base, Duration: time.Second,
		Steps: []runner.StepResult{
			measureStep(0, "0", "link", runner.Measurement{Name: `=HYPERLINK("http://x","y")`, Value: 1.0}),
			measureStep(1, "1", "-offset", runner.Measurement{Name: "offset", Value: -3.5, Unit: "mV", Min: float(-10), Max: float(-1)}),
			measureStep(2, "2", "reply", runner.Measurement{Name: "reply", Value: "+cmd|' /C calc'!A0", Outcome: runner.Failed, Equals: "@SUM(1)"}),
			measureStep(3, "3", "text number", runner.Measurement{Name: "text", Value: "-2"}),
			measureStep(4, "4", "\tname", runner.Measurement{Name: "@user", Value: "\r=1+1", Unit: "-V", Regex: "-x"}),
			measureStep(5, "5", "sum", runner.Measurement{Name: "sum", Value: "-1+2"}),
		}}
	var b bytes.Buffer
	if err := WriteMeasurementsCSV(&b, eventFile(t, []runner.SequenceResult{seq})); err != nil {
		t.Fatal(err)
	}
	golden(t, "measurements.golden.csv", b.Bytes())
	rows, err := csv.NewReader(bytes.NewReader(b.Bytes())).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range rows[0] {
		col[h] = i
	}
	tests := []struct {
		row       int
		column    string
		want      string
		reasoning string
	}{
		{1, "sequence", "'=sequence", "a sequence name that is a formula"},
		{1, "name", `'=HYPERLINK("http://x","y")`, "a measurement name that is a formula"},
		{1, "value", "1", "a number"},
		{2, "value", "-3.5", "a negative number stays a number"},
		{2, "min", "-10", "a negative limit stays a number"},
		{2, "step_name", "'-offset", "a step name starting with -"},
		{3, "value", "'+cmd|' /C calc'!A0", "a text value starting with +"},
		{3, "equals", "'@SUM(1)", "a text limit starting with @"},
		{4, "value", "-2", "text that is a plain number reads as one"},
		{5, "name", "'@user", "a name starting with @"},
		{5, "value", `\r=1+1`, "a carriage return is escaped, so the cell starts with a backslash"},
		{5, "step_name", `\tname`, "a tab is escaped"},
		{5, "unit", "'-V", "a unit starting with -"},
		{5, "regex", "'-x", "a pattern starting with -"},
		{6, "value", "'-1+2", "a sum is not a number"},
	}
	for _, tt := range tests {
		if got := rows[tt.row][col[tt.column]]; got != tt.want {
			t.Errorf("row %d %s = %q, want %q (%s)", tt.row, tt.column, got, tt.want, tt.reasoning)
		}
	}
}

func TestCSVCell(t *testing.T) {
	for in, want := range map[string]string{
		"": "", "3.31": "3.31", "-3.31": "-3.31", "+1e-3": "+1e-3", "-.5": "-.5", "-1E+9": "-1E+9",
		"-": "'-", "+": "'+", "-e5": "'-e5", "-1e": "'-1e", "-1.2.3": "'-1.2.3", "=1": "'=1", "@a": "'@a",
		"\tx": "'\tx", "\rx": "'\rx", "a=b": "a=b", "-Inf": "'-Inf", "-0x10": "'-0x10",
	} {
		if got := csvCell(in); got != want {
			t.Errorf("csvCell(%q) = %q, want %q", in, got, want)
		}
	}
}

package report

import (
	"slices"
	"strconv"
	"testing"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/hilrun/hilrun/pkg/runner"
)

// TestJUnitNamesSortInRunOrder: CI servers list testcases by name, so
// every name starts with its entry's zero-padded index: steps, groups,
// finally steps past ten and the cases of a pio_test step alike.
func TestJUnitNamesSortInRunOrder(t *testing.T) {
	var cases []any
	for i := range 12 {
		cases = append(cases, map[string]any{"suite": "t", "name": string(rune('z' - i)), "status": "PASSED"})
	}
	seq := runner.SequenceResult{Name: "s", File: "s.yaml", Status: runner.Passed, StartedAt: base}
	for i := range 12 {
		p := strconv.Itoa(i)
		switch i % 3 {
		case 0:
			seq.Steps = append(seq.Steps, runner.StepResult{Path: p, Kind: "send", Name: "x", Status: runner.Passed})
		case 1:
			// Group names sort before digits or after them.
			g := []string{"Zeta", "alpha"}[i%2]
			seq.Steps = append(seq.Steps,
				runner.StepResult{Path: p + ".0", Kind: "pio_test", Name: "fw", Group: g, Status: runner.Passed, Data: map[string]any{"cases": cases}},
				runner.StepResult{Path: p, Kind: "group", Name: g, Status: runner.Passed})
		case 2:
			seq.Steps = append(seq.Steps, runner.StepResult{Path: p, Kind: "pio_test", Name: "fw", Status: runner.Passed, Data: map[string]any{"cases": cases}})
		}
	}
	for i := range 11 {
		seq.Steps = append(seq.Steps, runner.StepResult{Path: "finally." + strconv.Itoa(i), Kind: "delay", Name: "x", Status: runner.Passed})
	}
	s := parseJUnit(t, junitReport(t, []runner.SequenceResult{seq})).Suites[0]
	checkSorted(t, s)
	if n := len(s.Testcases); n != 4*1+4*13+4*12+11 {
		t.Errorf("%d testcases", n)
	}
	for _, want := range []string{"01 alpha", "01 alpha 01.0 pio_test fw: 01 t/z", "02 pio_test fw: 12 t/o", "04 Zeta", "finally.00 delay x", "finally.10 delay x"} {
		if !slices.ContainsFunc(s.Testcases, func(tc junit.Testcase) bool { return tc.Name == want }) {
			t.Errorf("no testcase named %q", want)
		}
	}
}

// checkSorted fails unless the names of s's testcases are in the order a
// CI server that sorts them by name would show.
func checkSorted(t *testing.T, s junit.Testsuite) {
	t.Helper()
	var names []string
	for _, tc := range s.Testcases {
		names = append(names, tc.Name)
	}
	if !slices.IsSorted(names) {
		t.Errorf("suite %q: testcase names do not sort in run order: %q", s.Name, names)
	}
}

package report

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// interruptSeq waits in step 1, and its finally step fails.
const interruptSeq = `name: stopped
vars: {x: 1}
steps:
  - assert: x == 1
  - delay: 10m
  - assert: x == 1
finally:
  - assert: x == 2
`

// TestJUnitInterruptComesFirst interrupts a real run, during a step and
// between steps: the suite's first testcase is the interrupt, and the
// finally step that failed afterwards is reported as what it is, not as
// the cause.
func TestJUnitInterruptComesFirst(t *testing.T) {
	tests := []struct {
		name    string
		when    runner.EventType // the event of step 0 or 1 that brings Ctrl-C
		path    string
		message string
	}{
		{"during a step", runner.StepStarted, "1", "interrupted during step 1 delay"},
		{"between steps", runner.StepFinished, "0", "interrupted"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq, err := steps.Parse("seq/stopped.yaml", []byte(interruptSeq), steps.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			sink := runner.SinkFunc(func(e runner.Event) {
				if e.Type == tt.when && e.Step != nil && e.Step.Path == tt.path {
					cancel()
				}
			})
			res := runner.Run(ctx, seq, runner.Bench{}, runner.Options{
				KeepSteps: true,
				Sink:      sink,
			})
			if res.Status != runner.Interrupted {
				t.Fatalf("run status %s, want interrupted", res.Status)
			}
			suites := parseJUnit(t, junitReport(t, []runner.SequenceResult{*res}))
			s := suites.Suites[0]
			checkSorted(t, s)
			first := s.Testcases[0]
			if first.Name != interruptedCaseName || first.Error == nil || first.Error.Type != "interrupted" ||
				!strings.HasPrefix(first.Error.Message, tt.message) {
				t.Fatalf("first testcase %q: %+v, want the interrupt (%q)", first.Name, first.Error, tt.message)
			}
			if !strings.Contains(first.Error.Data, "after the interrupt, finally step finally.0 assert") {
				t.Errorf("the interrupt does not tell of the finally step that failed after it:\n%s", first.Error.Data)
			}
			fin := s.Testcases[len(s.Testcases)-1]
			if !strings.HasPrefix(fin.Name, "finally.0 assert") || fin.Failure == nil || fin.Failure.Type != "failed" {
				t.Errorf("last testcase %q: failure %+v, want the finally step's failure", fin.Name, fin.Failure)
			}
			if s.Errors != 1+btoi(tt.when == runner.StepStarted) || s.Failures != 1 {
				t.Errorf("errors %d failures %d", s.Errors, s.Failures)
			}
		})
	}
}

// TestJUnitFinallyErrorIsNotTheCause: when a finally step errors after an
// interrupt, the runner records its error as the sequence's; the report
// still names the interrupt first and tells the finally step's error as
// what came after it.
func TestJUnitFinallyErrorIsNotTheCause(t *testing.T) {
	seq := runner.SequenceResult{
		Name: "power", File: "seq/power.yaml", Status: runner.Interrupted, StartedAt: base,
		Error: "write /dev/ttyUSB0: input/output error",
		Steps: []runner.StepResult{
			{Path: "0", Kind: "send", Name: "on", Status: runner.Passed},
			{Path: "1", Kind: "expect", Name: "boot", Status: runner.Interrupted, Message: "interrupted", File: "seq/power.yaml", Line: 7, Column: 5},
			{Path: "2", Kind: "send", Name: "test", Status: runner.Skipped, Message: "not run"},
			{Path: "finally.0", Kind: "send", Name: "off", Status: runner.Errored, Message: "write /dev/ttyUSB0: input/output error"},
		},
	}
	suites := parseJUnit(t, junitReport(t, []runner.SequenceResult{seq}))
	s := suites.Suites[0]
	checkSorted(t, s)
	var names []string
	for _, tc := range s.Testcases {
		names = append(names, tc.Name)
	}
	want := []string{"(interrupted)", "00 send on", "01 expect boot", "02 send test", "finally.0 send off"}
	if !slices.Equal(names, want) {
		t.Errorf("testcases %q, want %q", names, want)
	}
	first := s.Testcases[0].Error
	wantBody := "interrupted during step 1 expect boot\nat seq/power.yaml:7:5\n" +
		"after the interrupt, finally step finally.0 send off error: write /dev/ttyUSB0: input/output error\n"
	if first == nil || first.Message != "interrupted during step 1 expect boot" || first.Data != wantBody {
		t.Errorf("the interrupt's testcase says %+v, want body %q", first, wantBody)
	}
	if s.SystemErr != nil {
		t.Errorf("system-err gives the finally step's error as the sequence's: %q", s.SystemErr.Data)
	}
	if s.Tests != 5 || s.Errors != 3 || s.Skipped != 1 {
		t.Errorf("tests/errors/skipped = %d/%d/%d, want 5/3/1", s.Tests, s.Errors, s.Skipped)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

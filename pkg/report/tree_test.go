package report

import (
	"bytes"
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// treeSeq has a failure inside a group when z is 2: the rest of the group,
// a nested group and a later group do not run.
const treeSeq = `name: tree
vars: {x: 1, z: 1}
steps:
  - set: {y: 1}
  - group: first
    steps:
      - assert: x == 1
      - assert: z == 1
      - assert: x == 1
      - group: inner
        steps:
          - assert: x == 1
  - group: second
    steps:
      - assert: x == 1
      - delay: 1ms
finally:
  - assert: x == 1
`

// setupSeq needs a device, which a failing opener never opens.
const setupSeq = `name: setup
devices:
  dut: {port: /dev/ttyUSB9}
steps:
  - send: version
    to: dut
  - group: boot
    steps:
      - send: boot
        to: dut
  - repeat: 2
    steps:
      - send: status
        to: dut
finally:
  - send: led off
    to: dut
  - delay: 1ms
`

// runReal runs src through the runner, with the times every report shows
// zeroed so its output is stable, and returns the console output and the
// result.
func runReal(t *testing.T, src string, vars map[string]string, open runner.Opener) (string, runner.SequenceResult) {
	t.Helper()
	seq, err := steps.Parse("seq/tree.yaml", []byte(src), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c := NewConsole(&out, ConsoleOptions{})
	zero := runner.SinkFunc(func(e runner.Event) {
		e.Time, e.Offset = base, 0
		if e.Step != nil {
			st := *e.Step
			st.Started, st.Duration = 0, 0
			e.Step = &st
		}
		if e.Result != nil {
			r := *e.Result
			r.Duration = 0
			e.Result = &r
		}
		c.Event(e)
	})
	res := runner.Run(context.Background(), seq, runner.Bench{
		Open: open,
	}, runner.Options{
		KeepSteps: true,
		Vars:      vars,
		Sink:      zero,
	})
	res.StartedAt, res.Duration = base, 0
	for i := range res.Steps {
		res.Steps[i].Started, res.Steps[i].Duration = 0, 0
	}
	return out.String(), *res
}

func caseNames(t *testing.T, res runner.SequenceResult) []string {
	t.Helper()
	var names []string
	for _, s := range parseJUnit(t, junitReport(t, []runner.SequenceResult{res})).Suites {
		for _, tc := range s.Testcases {
			names = append(names, tc.Name)
		}
	}
	return names
}

func TestConsoleTreeAfterFailureInGroup(t *testing.T) {
	out, failed := runReal(t, treeSeq, map[string]string{"z": "2"}, nil)
	golden(t, "console_tree.golden", []byte(out))

	_, passed := runReal(t, treeSeq, nil, nil)
	if got, want := caseNames(t, failed), caseNames(t, passed); !slices.Equal(got, want) {
		t.Errorf("JUnit cases after a failure %q, want those of a full run %q", got, want)
	}
}

func TestConsoleSetupFailureComesFirst(t *testing.T) {
	fail := func(context.Context, *steps.Device) (runner.Console, error) {
		return nil, errors.New("open /dev/ttyUSB9: no such port")
	}
	out, res := runReal(t, setupSeq, nil, fail)
	golden(t, "console_setup.golden", []byte(out))

	j := junitReport(t, []runner.SequenceResult{res})
	golden(t, "junit_setup.golden.xml", j)
	suites := parseJUnit(t, j)
	if got, want := caseNames(t, res), []string{"00 send version", "01 boot", "02 repeat 2 times", "finally.0 send led off", "finally.1 delay 1ms"}; !slices.Equal(got, want) {
		t.Errorf("JUnit cases %q, want %q", got, want)
	}
	s := suites.Suites[0]
	if s.Errors != 1 || s.Skipped != 3 {
		t.Errorf("suite counts: %d errors, %d skipped; want the open error once and 3 skipped", s.Errors, s.Skipped)
	}
	first := s.Testcases[0]
	if first.Error == nil || first.Error.Message != res.Error {
		t.Errorf("first case %+v, want it to carry the open error %q", first, res.Error)
	}
}

// TestJUnitErrorAfterSteps checks that a sequence error that came after
// steps ran (a log that lost bytes) is not pinned on a step that did not
// run: it gets a testcase of its own.
func TestJUnitErrorAfterSteps(t *testing.T) {
	seq := runner.SequenceResult{Name: "lossy", File: "seq/lossy.yaml", Status: runner.Errored, StartedAt: base,
		Error: "console dut: 12 bytes lost",
		Steps: []runner.StepResult{
			{Index: 0, Path: "0", Kind: "send", Name: "a", Status: runner.Passed},
			{Index: 1, Path: "1", Kind: "send", Name: "b", Status: runner.Skipped, Message: "not run"},
		}}
	s := parseJUnit(t, junitReport(t, []runner.SequenceResult{seq})).Suites[0]
	var names []string
	for _, tc := range s.Testcases {
		names = append(names, tc.Name)
	}
	if want := []string{"00 send a", "01 send b", "sequence"}; !slices.Equal(names, want) {
		t.Fatalf("cases %q, want %q", names, want)
	}
	if s.Testcases[1].Skipped == nil || s.Testcases[2].Error == nil || s.Tests != 3 || s.Errors != 1 || s.Skipped != 1 {
		t.Errorf("suite %+v", s)
	}
}

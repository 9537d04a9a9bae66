package plan_test

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

const src = `
vars:
  greeting: hello
devices:
  dut: {baud: 115200}
probes:
  p: {}
steps:
  - send: ${greeting}
  - exec: [echo, hi]
    dir: sub
  - upload: {openocd: {file: fw.bin, method: load, offset: 0x8000000}}
    probe: p
`

func load(t *testing.T) *steps.Sequence {
	t.Helper()
	seq, err := steps.Parse("/work/seq.yaml", []byte(src), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return seq
}

// TestBindLeavesTheSequence: binding returns a plan and never changes the
// loaded sequence, so one sequence binds to many benches.
func TestBindLeavesTheSequence(t *testing.T) {
	seq, again := load(t), load(t)
	pl, err := plan.Bind(seq, plan.Sources{Ports: map[string]string{"dut": "/dev/ttyACM0"}, OpenOCDs: map[string]string{"p": "127.0.0.1:4444"}, Vars: map[string]string{"greeting": "hi"}})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(seq, again) {
		t.Error("Bind changed the loaded sequence")
	}
	if got := pl.Sequence().Device("dut").Port; got != "/dev/ttyACM0" {
		t.Errorf("bound port = %q", got)
	}
	if got := pl.Sequence().Probe("p").OpenOCD; got != "127.0.0.1:4444" {
		t.Errorf("bound probe = %q", got)
	}
	if _, err := plan.Bind(seq, plan.Sources{Ports: map[string]string{"nope": "/dev/x"}}); err == nil {
		t.Error("binding a device the sequence lacks: no error")
	}
}

// TestRebindCopies: Rebind works on a copy of the bindings and of the step
// tree; the plan it started from stays as it was.
func TestRebindCopies(t *testing.T) {
	pl, err := plan.Bind(load(t), plan.Sources{})
	if err != nil {
		t.Fatal(err)
	}
	other, err := plan.Bind(load(t), plan.Sources{})
	if err != nil {
		t.Fatal(err)
	}
	changed, err := pl.Rebind(func(seq *steps.Sequence) (*steps.Sequence, error) {
		seq.Device("dut").Port = "/dev/ttyUSB9"
		steps.Walk(seq, func(s *steps.Step) {
			switch {
			case s.Exec != nil:
				s.Exec.Dir = "/elsewhere"
			case s.Build != nil && s.Build.Image != nil:
				s.Build.Image.File = "/elsewhere/fw.bin"
			}
		})
		return seq, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(pl, other) {
		t.Error("Rebind changed the plan it started from")
	}
	if changed.Sequence().Device("dut").Port != "/dev/ttyUSB9" {
		t.Error("Rebind lost its change")
	}
}

// TestRunGivesVarsAndLimits: a plan runs with its variables over the
// file's, and its limits: a step past MaxSteps does not run.
func TestRunGivesVarsAndLimits(t *testing.T) {
	seq, err := steps.Parse("s.yaml", []byte("vars:\n  v: file\nsteps:\n  - set: {seen: '${v}'}\n  - set: {second: x}\n"), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pl, err := plan.Bind(seq, plan.Sources{Vars: map[string]string{"v": "flag"}, Limits: plan.Limits{MaxSteps: 1}})
	if err != nil {
		t.Fatal(err)
	}
	res := pl.Run(context.Background(), runner.Bench{}, plan.Output{KeepSteps: true})
	if len(res.Steps) == 0 || res.Steps[0].Saved["seen"] != "flag" {
		t.Fatalf("first step saved %v, want seen=flag", res.Steps)
	}
	if res.Status != runner.Errored || !containsStepLimit(res) {
		t.Errorf("status %s, error %q: want the step limit to stop the second step", res.Status, res.Error)
	}
}

func containsStepLimit(res *runner.SequenceResult) bool {
	for _, s := range res.Steps {
		if s.Status == runner.Errored && strings.Contains(s.Message, "step limit") {
			return true
		}
	}
	return false
}

package results

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
)

// TestRecoveryRecords: a run's recoveries and bad benches reach the
// Summarizer's hooks in order, between sequences whose numbering they
// leave alone.
func TestRecoveryRecords(t *testing.T) {
	path := filepath.Join(t.TempDir(), EventFile)
	s, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 12, 1, 2, 0, 0, 0, time.UTC)
	seq := func(name string) {
		s.Event(runner.Event{Type: runner.SequenceStarted, Sequence: name, File: name + ".yaml", Time: at})
		s.Event(runner.Event{Type: runner.StepFinished, Step: &runner.StepResult{Kind: "send", Status: runner.Passed}})
		s.Event(runner.Event{Type: runner.SequenceFinished, Result: &runner.SequenceResult{Name: name, File: name + ".yaml", Status: runner.Passed}})
	}
	seq("first")
	rec := &Recovery{Bench: "left", Trigger: TriggerHealth, Sequence: "second.yaml", StartedAt: at,
		Check: &Check{Status: runner.Failed, Message: `timed out after 2s waiting for "sim> "`},
		Rungs: []RungResult{
			{Index: 1, Label: "send reboot", Check: Check{Status: runner.Passed}, Health: Check{Status: runner.Failed, Message: "timed out"}},
			{Index: 2, Label: "power cycle", Check: Check{Status: runner.Passed}, Health: Check{Status: runner.Failed, Message: "timed out again"}},
		}}
	s.Recovered(rec)
	s.MarkedBad(&BadBench{Bench: "left", Reason: rec.BadReason(), At: at})
	seq("second")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	var got Benches
	var seqs []int
	z := &Summarizer{BenchHooks: got.Hooks(), OnEnd: func(i int, _ *Sequence, _ Counts) { seqs = append(seqs, i) }}
	if err := Summarize(path, z); err != nil {
		t.Fatal(err)
	}
	if len(seqs) != 2 || seqs[0] != 0 || seqs[1] != 1 {
		t.Errorf("sequences numbered %v, want [0 1]", seqs)
	}
	if len(got.Recoveries) != 1 || len(got.Bad) != 1 {
		t.Fatalf("read %d recoveries and %d bad benches, want 1 and 1", len(got.Recoveries), len(got.Bad))
	}
	r := got.Recoveries[0]
	if r.Recovered || len(r.Rungs) != 2 || r.Rungs[1].Health.Message != "timed out again" {
		t.Errorf("recovery read back as %+v", r)
	}
	const reason = `the health check failed before second.yaml and after each of 2 rungs (send reboot, power cycle): timed out again`
	if got.Bad[0].Reason != reason {
		t.Errorf("reason = %q\nwant     %q", got.Bad[0].Reason, reason)
	}
	names, byBench, bad := got.ByBench()
	if len(names) != 1 || len(byBench["left"]) != 1 || bad["left"] != reason {
		t.Errorf("ByBench = %v, %v, %v", names, byBench, bad)
	}
}

// TestRecoveryWords: the outcome and the reason in the words every report
// uses.
func TestRecoveryWords(t *testing.T) {
	for _, tc := range []struct {
		name         string
		r            Recovery
		outcome, why string
		reason       string
	}{
		{"recovered by the second rung",
			Recovery{Trigger: TriggerError, Sequence: "hang.yaml", Recovered: true, Rungs: []RungResult{{Index: 1, Label: "send reboot"}, {Index: 2, Label: "reset run"}}},
			"recovered by rung 2 (reset run)", "hang.yaml ended in a bench error", ""},
		{"no rungs",
			Recovery{Trigger: TriggerHealth, Sequence: "boot.yaml", Check: &Check{Message: "timed out"}},
			"not recovered: the bench has no rungs to try", "the health check failed before boot.yaml: timed out", "the health check failed before boot.yaml: timed out; the bench has no rungs to try"},
		{"an error and no rungs",
			Recovery{Trigger: TriggerError, Sequence: "boot.yaml", Check: &Check{Status: runner.Failed, Message: "no prompt"}},
			"not recovered: the bench has no rungs to try", "boot.yaml ended in a bench error", "boot.yaml ended in a bench error, and the health check failed after it: no prompt; the bench has no rungs to try"},
		{"healthy after an error",
			Recovery{Trigger: TriggerError, Sequence: "boot.yaml", Check: &Check{Status: runner.Passed}, Recovered: true},
			"healthy: the health check passed, no rung needed", "boot.yaml ended in a bench error", ""},
		{"interrupted",
			Recovery{Trigger: TriggerError, Sequence: "boot.yaml", Interrupted: true, Rungs: []RungResult{{Index: 1}}},
			"interrupted after 1 rung", "boot.yaml ended in a bench error", ""},
		{"one rung",
			Recovery{Trigger: TriggerError, Sequence: "boot.yaml", Rungs: []RungResult{{Index: 1, Label: "reset run", Health: Check{Message: "no prompt"}}}},
			"not recovered: 1 rung tried", "boot.yaml ended in a bench error", "boot.yaml ended in a bench error, and the health check failed after it and after rung 1 (reset run): no prompt"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.r.Outcome(); got != tc.outcome {
				t.Errorf("Outcome = %q, want %q", got, tc.outcome)
			}
			if got := tc.r.Why(); got != tc.why {
				t.Errorf("Why = %q, want %q", got, tc.why)
			}
			if tc.reason != "" {
				if got := tc.r.BadReason(); got != tc.reason {
					t.Errorf("BadReason = %q, want %q", got, tc.reason)
				}
			}
		})
	}
}

// TestCheckFrom: a run's error, else its first step that did not pass,
// says what went wrong.
func TestCheckFrom(t *testing.T) {
	r := &runner.SequenceResult{Status: runner.Failed, Steps: []runner.StepResult{
		{Kind: "send", Status: runner.Passed, Message: "ok"},
		{Kind: "group", Status: runner.Failed, Message: "group failed"},
		{Kind: "expect", Status: runner.Failed, Message: "timed out"},
	}}
	if got := CheckFrom(r).Message; got != "timed out" {
		t.Errorf("message = %q, want the expect's", got)
	}
	r.Error = "device console: port busy"
	if got := CheckFrom(r).Message; got != r.Error {
		t.Errorf("message = %q, want the run's error", got)
	}
}

package plan_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

const ladderBench = `
devices:
  dut: /dev/ttyACM0
power:
  dut: {cycle: [./relay.sh]}
health:
  - send: ""
    expect: "$ "
recover:
  - send: reboot
  - power: cycle
  - reset: run
`

func loadLadder(t *testing.T) *plan.Ladder {
	t.Helper()
	p := filepath.Join(t.TempDir(), "hilrun.bench.yaml")
	if err := os.WriteFile(p, []byte(ladderBench), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := steps.LoadBench(files.Anywhere(), p)
	if err != nil {
		t.Fatal(err)
	}
	l, err := plan.BindLadder("left", b.Ladder, func(seq *steps.Sequence) (*plan.Plan, error) {
		return plan.Bind(seq, plan.Sources{Bench: b})
	})
	if err != nil || l == nil {
		t.Fatalf("BindLadder = %v, %v", l, err)
	}
	return l
}

// board answers the ladder's runs: its health check passes once the rung
// named cure has run (never when cure is ""), or from the start when
// healthy.
type board struct {
	cure    string
	healthy bool
	ran     []string
	cancel  func() // called after the first rung, when set
}

func (b *board) run(ctx context.Context, pl *plan.Plan, what string) *runner.SequenceResult {
	b.ran = append(b.ran, what)
	seq := pl.Sequence()
	res := &runner.SequenceResult{Name: seq.Name, StartedAt: time.Date(2026, 12, 1, 2, 0, len(b.ran), 0, time.UTC), Duration: time.Second, Status: runner.Passed}
	switch {
	case seq.Name == "health" && !b.healthy:
		res.Status = runner.Failed
		res.Steps = []runner.StepResult{{Kind: "expect", Status: runner.Failed, Message: `timed out waiting for "$ "`}}
	case seq.Name == b.cure:
		b.healthy = true
	}
	if strings.HasPrefix(what, "rung") && b.cancel != nil {
		b.cancel()
	}
	return res
}

func TestLadderClimbs(t *testing.T) {
	ctx := context.Background()
	t.Run("healthy before a sequence", func(t *testing.T) {
		b := &board{healthy: true}
		if r := loadLadder(t).Before(ctx, b.run, "boot.yaml"); r != nil {
			t.Errorf("a healthy bench climbed: %+v", r)
		}
		if strings.Join(b.ran, ",") != "health" {
			t.Errorf("ran %v, want the health check alone", b.ran)
		}
	})
	t.Run("healthy after a bench error", func(t *testing.T) {
		b := &board{healthy: true}
		r := loadLadder(t).After(ctx, b.run, "boot.yaml")
		if r == nil || !r.Recovered || len(r.Rungs) != 0 || r.Trigger != results.TriggerError {
			t.Errorf("climb = %+v, want recovered by the health check alone", r)
		}
	})
	t.Run("the second rung works", func(t *testing.T) {
		b := &board{cure: "rung 2"}
		r := loadLadder(t).Before(ctx, b.run, "boot.yaml")
		if r == nil || !r.Recovered || len(r.Rungs) != 2 {
			t.Fatalf("climb = %+v, want recovered by rung 2", r)
		}
		if got := strings.Join(b.ran, ","); got != "health,rung-1,health-after-rung-1,rung-2,health-after-rung-2" {
			t.Errorf("ran %s", got)
		}
		if r.Outcome() != "recovered by rung 2 (power cycle)" || r.Rungs[0].Worked() || !r.Rungs[1].Worked() {
			t.Errorf("outcome %q, rungs %+v", r.Outcome(), r.Rungs)
		}
		if r.Check == nil || r.Check.Status != runner.Failed || r.Rungs[1].Line != 11 {
			t.Errorf("check %+v, rung 2 at line %d", r.Check, r.Rungs[1].Line)
		}
		if r.DurationMS.D() != 5*time.Second {
			t.Errorf("duration %v, want from the first check's start to the last one's end", r.DurationMS.D())
		}
	})
	t.Run("nothing works", func(t *testing.T) {
		b := &board{}
		r := loadLadder(t).After(ctx, b.run, "hang.yaml")
		if r.Recovered || r.Interrupted || len(r.Rungs) != 3 {
			t.Fatalf("climb = %+v, want 3 rungs and not recovered", r)
		}
		if !strings.HasPrefix(r.BadReason(), "hang.yaml ended in a bench error, and the health check failed after it and after each of 3 rungs (send reboot, power cycle, reset run): timed out") {
			t.Errorf("reason %q", r.BadReason())
		}
	})
	t.Run("interrupted", func(t *testing.T) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		b := &board{cancel: cancel}
		r := loadLadder(t).After(ctx, b.run, "hang.yaml")
		if r.Recovered || !r.Interrupted || len(r.Rungs) != 1 {
			t.Errorf("climb = %+v, want interrupted after rung 1", r)
		}
	})
}

// TestBindLadderBindsEachPlan: every part of the ladder goes through the
// caller's binding, whose refusal names the rung.
func TestBindLadderBindsEachPlan(t *testing.T) {
	p := filepath.Join(t.TempDir(), "hilrun.bench.yaml")
	if err := os.WriteFile(p, []byte(ladderBench), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := steps.LoadBench(files.Anywhere(), p)
	if err != nil {
		t.Fatal(err)
	}
	var bound []string
	_, err = plan.BindLadder("left", b.Ladder, func(seq *steps.Sequence) (*plan.Plan, error) {
		bound = append(bound, seq.Name)
		if seq.Name == "rung 2" {
			return nil, os.ErrPermission
		}
		return plan.Bind(seq, plan.Sources{Bench: b})
	})
	if err == nil || !strings.Contains(err.Error(), "bench left: recover rung 2 (power cycle) ("+p+":11:5): permission denied") {
		t.Errorf("error %v", err)
	}
	if strings.Join(bound, ",") != "health,rung 1,rung 2" {
		t.Errorf("bound %v", bound)
	}
	if l, err := plan.BindLadder("x", nil, nil); l != nil || err != nil {
		t.Errorf("a nil ladder binds to %v, %v", l, err)
	}
}

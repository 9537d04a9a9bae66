package runner_test

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// lastStep is the last step result of a run that is not a repeat or group.
func lastLeaf(res *runner.SequenceResult) runner.StepResult {
	for i := len(res.Steps) - 1; i >= 0; i-- {
		if k := res.Steps[i].Kind; k != string(steps.KindRepeat) && k != string(steps.KindGroup) && res.Steps[i].Status != runner.Skipped {
			return res.Steps[i]
		}
	}
	return runner.StepResult{}
}

func TestValueLimit(t *testing.T) {
	tests := []struct {
		name     string
		src      string
		maxValue int
		want     string // the message of the step that reached the limit
	}{
		{"string doubling with a template", "vars: {s: x}\nsteps:\n  - repeat: 100\n    steps:\n      - set: {s: \"${s}${s}\"}\n",
			0, "set s: the value is 1048577 bytes or more, past the value limit of 1048576 bytes (--max-value raises it)"},
		{"string doubling with an expression", "vars: {s: x}\nsteps:\n  - repeat: 100\n    steps:\n      - set: {s: {expr: s + s}}\n",
			0, "set s: the value is 2097152 bytes or more, past the value limit of 1048576 bytes"},
		{"a lower limit", "vars: {s: x}\nsteps:\n  - repeat: 100\n    steps:\n      - set: {s: \"${s}${s}\"}\n",
			1000, "set s: the value is 1001 bytes or more, past the value limit of 1000 bytes"},
		{"repeat in an expression", "vars: {s: x}\nsteps:\n  - set: {t: {expr: 'repeat(s, 1000000000)'}}\n",
			0, "set t = repeat(s, 1000000000): repeat would make 1000000000 bytes of text, after 0 already made: past the expression text budget of 4194304 bytes"},
		{"concatenation in a loop", "vars: {s: xxxxxxxxxxxxxxxx}\nsteps:\n  - set: {t: {expr: 'reduce(1..100000, #acc + s, \"\")'}}\n",
			0, "past the expression text budget of 4194304 bytes"},
		{"join of a long list", "vars: {s: " + strings.Repeat("x", 100) + "}\nsteps:\n  - set: {t: {expr: 'join(map(1..100000, s))'}}\n",
			0, "join would make"},
		{"replace that grows", "vars: {s: xxxxxxxxxxxxxxxx}\nsteps:\n  - set: {t: {expr: 'replace(s, \"\", repeat(\"y\", 1000000))'}}\n",
			0, "replace would make"},
		{"a list from an expression", "steps:\n  - set: {t: {expr: '1..200000'}}\n",
			0, "set t: the value is"},
		{"a long send", "vars: {s: xxxxxxxxxxxxxxxx}\nsteps:\n  - send: '${s}${s}'\n",
			20, "send: the value is 21 bytes or more, past the value limit of 20 bytes"},
		{"a long pattern", "vars: {s: xxxxxxxxxxxxxxxx}\nsteps:\n  - send: version\n    expect: '${s}${s}'\n",
			40, "pattern ${s}${s}: the value is 72 bytes or more, past the value limit of 40 bytes"},
		{"a long saved match", "steps:\n  - send_hex: 76657273696f6e0a\n    expect: {regex: 'fw v[0-9.]+'}\n    save: v\n",
			5, "save v: the value is 7 bytes or more, past the value limit of 5 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq := load(t, tt.src)
			dev := newDevice(shell)
			res := runner.Run(context.Background(), seq, runner.Bench{
				Open: func(ctx context.Context, d *steps.Device) (runner.Console, error) { return dev, nil },
			}, runner.Options{
				KeepSteps:     true,
				MaxValueBytes: tt.maxValue,
			})
			if res.Status != runner.Errored {
				t.Fatalf("run %s, want error; steps %s", res.Status, statuses(res))
			}
			got := lastLeaf(res)
			if got.Status != runner.Errored || !strings.Contains(got.Message, tt.want) {
				t.Errorf("step %s %s: %q\nwant the message to contain %q", got.Path, got.Status, got.Message, tt.want)
			}
		})
	}
}

func TestValueWithinLimit(t *testing.T) {
	seq := load(t, "vars: {s: x}\nsteps:\n  - repeat: 19\n    steps:\n      - set: {s: \"${s}${s}\"}\n  - set: {t: {expr: s + s}}\n  - assert: len(t) == 1048576\n")
	res := runner.Run(context.Background(), seq, runner.Bench{}, runner.Options{
		KeepSteps: true,
	})
	if res.Status != runner.Passed {
		t.Fatalf("run %s: %s", res.Status, res.Error)
	}
}

func TestStepLimit(t *testing.T) {
	seq := load(t, "vars: {n: 0}\nsteps:\n  - repeat: 1000\n    steps:\n      - set: {n: {expr: n + 1}}\n      - assert: n > 0\nfinally:\n  - set: {done: 'yes'}\n  - assert: n == 5\n")
	res := runner.Run(context.Background(), seq, runner.Bench{}, runner.Options{
		KeepSteps: true,
		MaxSteps:  10,
	})
	if res.Status != runner.Errored {
		t.Fatalf("run %s, want error", res.Status)
	}
	want := "the run reached its step limit of 10 steps (repeat iterations included): this step did not run"
	if res.Error != want {
		t.Errorf("run error %q, want %q", res.Error, want)
	}
	var ran, limited int
	for _, s := range res.Steps {
		switch {
		case s.Kind == "set" && s.Status == runner.Passed && !strings.HasPrefix(s.Path, "finally"):
			ran++
		case s.Status == runner.Errored && s.Kind != "repeat":
			limited++
		}
	}
	if ran != 5 || limited != 1 {
		t.Errorf("%d sets ran and %d steps hit the limit, want 5 and 1: %s", ran, limited, statuses(res))
	}
	// finally has a budget of its own.
	if v := savedVar(res, "done"); v != "yes" {
		t.Errorf("finally did not run: done = %v; %s", v, statuses(res))
	}
	if last := res.Steps[len(res.Steps)-1]; last.Path != "finally.1" || last.Status != runner.Passed {
		t.Errorf("last step %s %s, want finally.1 passed", last.Path, last.Status)
	}
}

func TestNoStepLimitByDefault(t *testing.T) {
	seq := load(t, "steps:\n  - repeat: 20000\n    steps:\n      - set: {x: 1}\n")
	res := runner.Run(context.Background(), seq, runner.Bench{}, runner.Options{
		KeepSteps: true,
	})
	if res.Status != runner.Passed {
		t.Fatalf("run %s: %s", res.Status, res.Error)
	}
}

func TestLimitErrorsAreTyped(t *testing.T) {
	if errors.Is(runner.ErrValueLimit, runner.ErrStepLimit) {
		t.Fatal("the two limits are one error")
	}
}

// printer is a HostRunner whose command prints its first argument.
type printer struct{}

func (printer) Run(ctx context.Context, argv []string, dir string, env []string, out io.Writer) (int, error) {
	_, err := io.WriteString(out, argv[1]+"\n")
	return 0, err
}

func TestExecSaveValueLimit(t *testing.T) {
	seq := load(t, "steps:\n  - exec: [print, '"+strings.Repeat("x", 100)+"']\n    save: out\n")
	res := runner.Run(context.Background(), seq, runner.Bench{
		Host: printer{},
	}, runner.Options{
		KeepSteps:     true,
		ArtifactDir:   t.TempDir(),
		MaxValueBytes: 50,
	})
	got := lastLeaf(res)
	want := "save out: the value is 100 bytes or more, past the value limit of 50 bytes"
	if got.Status != runner.Errored || !strings.Contains(got.Message, want) {
		t.Errorf("step %s: %q, want %q", got.Status, got.Message, want)
	}
	res = runner.Run(context.Background(), seq, runner.Bench{
		Host: printer{},
	}, runner.Options{
		KeepSteps:   true,
		ArtifactDir: t.TempDir(),
	})
	if res.Status != runner.Passed {
		t.Errorf("within the default limit: %s %s", res.Status, res.Error)
	}
}

package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// lossyConsole is a device whose log lost bytes, behind a wrapper as the
// CLI wraps consoles.
type lossyConsole struct {
	*device
	err error
}

func (c *lossyConsole) LogErr() error { return c.err }

// TestLogLossIsBenchError: a run whose steps all passed but whose console
// log lost bytes ends as a bench error that says what was lost, and its
// steps still all ran.
func TestLogLossIsBenchError(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    error
		status runner.Status
	}{
		{"whole log", nil, runner.Passed},
		{"lost bytes", errors.New("console log /logs/dut.log: 100 of 300 bytes lost: no space left on device"), runner.Errored},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := &lossyConsole{device: newDevice(func(l string) string { return l + "\n" }), err: tc.err}
			seq := load(t, "steps:\n  - send: a\n    expect: a\n  - send: b\n    expect: b\n")
			res := runner.Run(context.Background(), seq, runner.Options{
				Open: func(ctx context.Context, _ *steps.Device) (runner.Console, error) { return wrapped{dev}, nil },
			})
			if res.Status != tc.status {
				t.Fatalf("status %s, want %s (%s)", res.Status, tc.status, res.Error)
			}
			if got := statuses(res); got != "0:passed 1:passed" {
				t.Errorf("steps %s, want both passed", got)
			}
			if tc.err != nil && !strings.Contains(res.Error, "console console: console log /logs/dut.log: 100 of 300 bytes lost") {
				t.Errorf("error %q does not say what was lost", res.Error)
			}
		})
	}
}

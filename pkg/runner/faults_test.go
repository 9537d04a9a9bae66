package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/process"
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
			res := runner.Run(context.Background(), seq, runner.Bench{
				Open: func(ctx context.Context, _ *steps.Device) (runner.Console, error) { return wrapped{dev}, nil },
			}, runner.Options{
				KeepSteps: true,
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

// awayConsole is a device that went away and is awaited (reconnect: true).
type awayConsole struct {
	*device
	away error
}

func (c *awayConsole) Disconnected() error { return c.away }

// TestExpectOnAwayDevice: an expect that times out while its device is
// away is a bench error that says so; while the device is there it is the
// device's failure.
func TestExpectOnAwayDevice(t *testing.T) {
	for _, tc := range []struct {
		name   string
		away   error
		status runner.Status
		msg    string
	}{
		{"device there", nil, runner.Failed, "timed out after 50ms waiting for"},
		{"device away", errors.New("/dev/ttyACM0: device disconnected: hang-up; it has not come back"), runner.Errored, "timed out after 50ms: /dev/ttyACM0: device disconnected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := &awayConsole{device: newDevice(func(string) string { return "" }), away: tc.away}
			seq := load(t, "steps:\n  - expect: never\n    timeout: 50ms\n")
			res := runner.Run(context.Background(), seq, runner.Bench{
				Open: func(ctx context.Context, _ *steps.Device) (runner.Console, error) { return wrapped{dev}, nil },
			}, runner.Options{
				KeepSteps: true,
			})
			if res.Status != tc.status || len(res.Steps) != 1 || !strings.Contains(res.Steps[0].Message, tc.msg) {
				t.Errorf("status %s, steps %+v; want %s with %q", res.Status, res.Steps, tc.status, tc.msg)
			}
		})
	}
}

// TestExecLogLoss writes an exec step's log to a full disk (/dev/full):
// the command's output still reaches the step, which passes, and the run
// ends as a bench error naming the log and the bytes lost.
func TestExecLogLoss(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	dir := t.TempDir()
	if err := os.Symlink("/dev/full", filepath.Join(dir, "exec-big.log")); err != nil {
		t.Fatal(err)
	}
	seq := load(t, `steps:
  - id: big
    exec: [sh, -c, 'i=0; while [ $i -lt 2000 ]; do echo line $i; i=$((i+1)); done']
    expect: line 1999
`)
	res := runner.Run(context.Background(), seq, runner.Bench{
		Host:    process.Runner{Policy: process.Permit(environ.Host())},
		OpenLog: openLog,
	}, runner.Options{
		KeepSteps:   true,
		ArtifactDir: dir,
	})
	if got := statuses(res); got != "0:passed" {
		t.Fatalf("steps %s, want 0:passed (%+v)", got, res.Steps)
	}
	if res.Status != runner.Errored || !strings.Contains(res.Error, "exec log "+filepath.Join(dir, "exec-big.log")+": ") || !strings.Contains(res.Error, "bytes lost: no space left on device") {
		t.Errorf("status %s, error %q; want a bench error naming the log", res.Status, res.Error)
	}
}

// discardErr is a console's word that it discarded what was sent.
type discardErr struct{}

func (discardErr) Error() string {
	return "close /dev/x: 12 bytes written were never sent: flow control held them, so they were discarded"
}
func (discardErr) Discarded() int { return 12 }

// discardingConsole discards what it still held when it closes.
type discardingConsole struct{ *device }

func (c discardingConsole) Close() error {
	c.device.Close()
	return fmt.Errorf("console: %w", discardErr{})
}

// TestDiscardedSendIsBenchError: a console that closes without sending
// all the run sent makes the run a bench error that says so, though every
// step passed; another error closing it does not.
func TestDiscardedSendIsBenchError(t *testing.T) {
	dev := discardingConsole{newDevice(func(l string) string { return l + "\n" })}
	seq := load(t, "steps:\n  - send: a\n    expect: a\n  - send: reboot\n")
	res := runner.Run(context.Background(), seq, runner.Bench{
		Open: func(ctx context.Context, _ *steps.Device) (runner.Console, error) { return dev, nil },
	}, runner.Options{KeepSteps: true})
	if res.Status != runner.Errored || !strings.Contains(res.Error, "12 bytes written were never sent") {
		t.Fatalf("status %s (%s), want an error saying what the device never got", res.Status, res.Error)
	}
	if strings.Contains(res.Error, "record is incomplete") {
		t.Errorf("error %q calls the lost send a lost record", res.Error)
	}
}

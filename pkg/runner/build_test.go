package runner_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// handoverDevice is a device whose port can be released for an upload.
type handoverDevice struct {
	*device
	mu     sync.Mutex
	events []string
}

func (h *handoverDevice) Release(ctx context.Context) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.events = append(h.events, "release")
	return nil
}

func (h *handoverDevice) Reacquire(ctx context.Context) error {
	h.mu.Lock()
	h.events = append(h.events, "reacquire")
	h.mu.Unlock()
	h.print("bootloader done\r\napp started\r\n")
	return nil
}

func TestBuildAndUploadSteps(t *testing.T) {
	seq := load(t, `
devices:
  dut: {port: /dev/ttyUSB7}
vars: {env: prod}
steps:
  - id: fw
    build:
      command: [make, "ENV=${env}"]
      env: {CFLAGS: "-O${env}"}
  - assert: steps.fw.flash_bytes < 200000
  - upload:
      command: [flash-tool, --port, /dev/ttyUSB7]
      port: dut
  - expect: app started
  - id: bad
    build:
      command: [make, broken]
`)
	dev := &handoverDevice{device: newDevice(shell)}
	var calls []runner.BuildRequest
	build := func(ctx context.Context, req runner.BuildRequest) (runner.BuildOutcome, error) {
		calls = append(calls, req)
		dev.mu.Lock()
		dev.events = append(dev.events, "tool "+req.Command[0])
		dev.mu.Unlock()
		if req.Command[len(req.Command)-1] == "broken" {
			return runner.BuildOutcome{OK: false, Summary: "main.c:3:10: fatal error: x.h: No such file or directory", Data: map[string]any{"class": "MissingHeader"}}, nil
		}
		return runner.BuildOutcome{OK: true, Summary: "flash 564 bytes", Data: map[string]any{"flash_bytes": 564}}, nil
	}
	res := runner.Run(context.Background(), seq, runner.Bench{
		Open:  func(ctx context.Context, d *steps.Device) (runner.Console, error) { return dev, nil },
		Build: build,
	}, runner.Options{
		KeepSteps: true,
	})
	if got := statuses(res); got != "0:passed 1:passed 2:passed 3:passed 4:failed" {
		t.Fatalf("steps = %s", got)
	}
	if got := strings.Join(calls[0].Command, " "); got != "make ENV=prod" || calls[0].Env[0] != "CFLAGS=-Oprod" {
		t.Errorf("build request = %q %q", got, calls[0].Env)
	}
	if calls[1].Port != "/dev/ttyUSB7" {
		t.Errorf("upload port = %q", calls[1].Port)
	}
	if got := strings.Join(dev.events, ","); got != "tool make,release,tool flash-tool,reacquire,tool make" {
		t.Errorf("events = %s: the port was not released around the upload only", got)
	}
	if res.Steps[4].Data["class"] != "MissingHeader" || !strings.Contains(res.Steps[4].Message, "fatal error") {
		t.Errorf("failed build = %+v", res.Steps[4])
	}
}

func TestBuildToolMissingIsABenchError(t *testing.T) {
	seq := load(t, `
steps:
  - build:
      command: [pio, run]
`)
	res := runner.Run(context.Background(), seq, runner.Bench{
		Build: func(ctx context.Context, req runner.BuildRequest) (runner.BuildOutcome, error) {
			return runner.BuildOutcome{}, errors.New(`run pio: executable file not found in $PATH (install PlatformIO Core)`)
		},
	}, runner.Options{
		KeepSteps: true,
	})
	if res.Status != runner.Errored || !strings.Contains(res.Error, "install PlatformIO") {
		t.Errorf("status %s, error %q", res.Status, res.Error)
	}
}

// failingRelease is a console whose Release lets go of the port and then
// fails, as serialx.Console.Release does when closing the port fails.
type failingRelease struct {
	*device
	released bool
}

func (f *failingRelease) Release(ctx context.Context) error {
	f.released = true
	return errors.New("close /dev/ttyUSB7: input/output error")
}

func (f *failingRelease) Reacquire(ctx context.Context) error {
	f.released = false
	return nil
}

func TestUploadFailedReleaseTakesThePortBack(t *testing.T) {
	seq := load(t, `
devices:
  dut: {port: /dev/ttyUSB7}
steps:
  - upload:
      command: [flash-tool]
      port: dut
`)
	dev := &failingRelease{device: newDevice(shell)}
	ran := false
	res := runner.Run(context.Background(), seq, runner.Bench{
		Open: func(ctx context.Context, d *steps.Device) (runner.Console, error) { return dev, nil },
		Build: func(ctx context.Context, req runner.BuildRequest) (runner.BuildOutcome, error) {
			ran = true
			return runner.BuildOutcome{OK: true}, nil
		},
	}, runner.Options{
		KeepSteps: true,
	})
	if ran || res.Status != runner.Errored || !strings.Contains(res.Error, "release dut for the upload") {
		t.Errorf("tool ran %v, status %s, error %q", ran, res.Status, res.Error)
	}
	if dev.released {
		t.Error("the console was left released after its Release failed")
	}
}

// bannerDevice prints its old firmware's banner just before it lets go of
// the port and the new one's after it is back.
type bannerDevice struct{ *device }

func (b *bannerDevice) Release(ctx context.Context) error {
	b.print("old firmware: app started\r\n")
	return nil
}

func (b *bannerDevice) Reacquire(ctx context.Context) error {
	b.print("new firmware: booting\r\n")
	return nil
}

func TestExpectAfterUploadSeesOnlyNewOutput(t *testing.T) {
	seq := load(t, `
devices:
  dut: {port: /dev/ttyUSB7}
steps:
  - upload:
      command: [flash-tool]
      port: dut
  - expect: app started
    timeout: 100ms
`)
	dev := &bannerDevice{device: newDevice(shell)}
	res := runner.Run(context.Background(), seq, runner.Bench{
		Open: func(ctx context.Context, d *steps.Device) (runner.Console, error) { return dev, nil },
		Build: func(ctx context.Context, req runner.BuildRequest) (runner.BuildOutcome, error) {
			return runner.BuildOutcome{OK: true}, nil
		},
	}, runner.Options{
		KeepSteps: true,
	})
	if got := statuses(res); got != "0:passed 1:failed" {
		t.Errorf("steps = %s: output from before the upload matched an expect after it", got)
	}
}

// lostDevice is a console whose port does not come back after an upload.
type lostDevice struct{ *device }

func (l *lostDevice) Release(ctx context.Context) error { return nil }

func (l *lostDevice) Reacquire(ctx context.Context) error {
	return errors.New("reacquire /dev/ttyUSB7: not back within 10s")
}

func TestUploadTimeoutKeepsReacquireError(t *testing.T) {
	seq := load(t, `
devices:
  dut: {port: /dev/ttyUSB7}
steps:
  - upload:
      command: [flash-tool]
      port: dut
    timeout: 50ms
`)
	dev := &lostDevice{device: newDevice(shell)}
	res := runner.Run(context.Background(), seq, runner.Bench{
		Open: func(ctx context.Context, d *steps.Device) (runner.Console, error) { return dev, nil },
		Build: func(ctx context.Context, req runner.BuildRequest) (runner.BuildOutcome, error) {
			<-ctx.Done()
			return runner.BuildOutcome{}, fmt.Errorf("run flash-tool: %w", ctx.Err())
		},
	}, runner.Options{
		KeepSteps: true,
	})
	if res.Status != runner.Errored || !strings.Contains(res.Error, "timed out after 50ms") || !strings.Contains(res.Error, "take dut back after the upload") {
		t.Errorf("status %s, error %q: the console lost after a timed-out upload is not reported", res.Status, res.Error)
	}
}

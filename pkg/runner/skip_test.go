package runner_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// groups lists each step's path, status and group, for comparing the step
// tree of a run cut short with that of a full run.
func groups(res *runner.SequenceResult) string {
	var s []string
	for _, st := range res.Steps {
		s = append(s, st.Path+":"+string(st.Status)+"["+st.Group+"]")
	}
	return strings.Join(s, " ")
}

func TestSkippedStepsKeepTheirGroups(t *testing.T) {
	seq := load(t, `
steps:
  - group: first
    steps:
      - assert: 1 == 2
      - send: version
      - group: inner
        steps:
          - send: version
  - group: second
    steps:
      - send: version`)
	res := run(t, context.Background(), seq, newDevice(shell), nil)
	want := "0.0:failed[first] 0.1:skipped[first] 0.2.0:skipped[first / inner] 0.2:skipped[first / inner] " +
		"0:failed[first] 1.0:skipped[second] 1:skipped[second]"
	if got := groups(res); got != want {
		t.Errorf("steps:\n got %s\nwant %s", got, want)
	}
}

func TestOpenErrorComesFirst(t *testing.T) {
	seq := load(t, `
devices:
  dut: {port: /dev/ttyUSB9}
steps:
  - group: boot
    steps:
      - send: version
        to: dut
finally:
  - send: led off
    to: dut
  - delay: 1ms`)
	seq, err := steps.Bind(seq, steps.Binding{Ports: map[string]string{"dut": "/dev/ttyUSB7"}})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	cause := errors.New("open /dev/ttyUSB7: no such port")
	res := runner.Run(context.Background(), seq, runner.Bench{
		Open: func(ctx context.Context, d *steps.Device) (runner.Console, error) { return nil, cause },
	}, runner.Options{
		KeepSteps: true,
		Sink:      rec,
	})
	wantErr := "device dut: open /dev/ttyUSB7: no such port (the port is from --port dut=/dev/ttyUSB7)"
	if res.Status != runner.Errored || res.Error != wantErr {
		t.Errorf("status %s error %q, want %q", res.Status, res.Error, wantErr)
	}
	types := rec.types()
	if len(types) < 2 || types[1] != runner.SetupFailed {
		t.Fatalf("events %v: the cause does not come before the steps", types)
	}
	e := rec.events[1]
	if e.Console != "dut" || e.Result == nil || e.Result.Error != wantErr {
		t.Errorf("setup_failed event: console %q, result %+v", e.Console, e.Result)
	}
	if got := statuses(res); got != "0.0:skipped 0:skipped finally.0:skipped finally.1:passed" {
		t.Errorf("steps = %s", got)
	}
	if m := res.Steps[2].Message; m != "not run: device dut did not open" {
		t.Errorf("finally step for the device: %q", m)
	}
}

func TestPortFrom(t *testing.T) {
	tests := []struct {
		name, src string
		bench     *steps.Bench
		ports     map[string]string
		want      string
	}{
		{name: "sequence", src: "devices:\n  dut: {port: /dev/ttyUSB9}\nsteps:\n  - send: x\n    to: dut\n",
			want: "(the port is from test.yaml:2:3)"},
		{name: "a step's to:", src: "steps:\n  - send: x\n    to: /dev/ttyUSB5\n",
			want: "(the port is from the step at test.yaml:2:5)"},
		{name: "bench", src: "devices:\n  dut: {baud: 9600}\nsteps:\n  - send: x\n    to: dut\n",
			bench: &steps.Bench{File: "lab.bench.yaml", Devices: map[string]*steps.Device{"dut": {Name: "dut", Port: "/dev/ttyACM3"}}},
			want:  "(the port is from bench file lab.bench.yaml)"},
		{name: "flag", src: "devices:\n  dut: {port: /dev/ttyUSB9}\nsteps:\n  - send: x\n    to: dut\n",
			ports: map[string]string{"dut": "/dev/ttyS1"},
			want:  "(the port is from --port dut=/dev/ttyS1)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq, err := steps.Bind(load(t, tt.src), steps.Binding{Bench: tt.bench, Ports: tt.ports})
			if err != nil {
				t.Fatal(err)
			}
			res := runner.Run(context.Background(), seq, runner.Bench{
				Open: func(ctx context.Context, d *steps.Device) (runner.Console, error) {
					return nil, errors.New("open " + d.Port + ": no such port")
				},
			}, runner.Options{})
			if !strings.HasSuffix(res.Error, tt.want) {
				t.Errorf("error %q, want it to end %q", res.Error, tt.want)
			}
		})
	}
}

// notifying is a device that tells of its reconnections, as
// serialx.Console does.
type notifying struct {
	*device
	mu sync.Mutex
	fn func(time.Time, string, string)
}

func (n *notifying) OnConnection(fn func(time.Time, string, string)) func() {
	n.mu.Lock()
	n.fn = fn
	n.mu.Unlock()
	return func() {}
}

func TestReconnectionIsAnnounced(t *testing.T) {
	dev := &notifying{}
	dev.device = newDevice(func(line string) string {
		// The board reboots on the command: its USB bridge comes back.
		dev.mu.Lock()
		fn := dev.fn
		dev.mu.Unlock()
		fn(time.Now(), "reconnected", "/dev/ttyUSB1")
		return "ok\r\n"
	})
	seq := load(t, `
steps:
  - send: reboot
    expect: ok`)
	rec := &recorder{}
	runner.Run(context.Background(), seq, runner.Bench{
		Open: func(context.Context, *steps.Device) (runner.Console, error) { return dev, nil },
	}, runner.Options{
		Sink: rec,
	})
	for _, e := range rec.events {
		if e.Type == runner.ConsoleNotice {
			if e.Console != "console" || string(e.Data) != "reconnected on /dev/ttyUSB1" {
				t.Errorf("notice %q on %q", e.Data, e.Console)
			}
			return
		}
	}
	t.Errorf("no console_notice event among %v", rec.types())
}

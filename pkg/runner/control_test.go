package runner_test

import (
	"context"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/logfile"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// paintedCamera "photographs" a 40x30 scene whose square at (10,10,8,8) is
// lit while *led is true: a stand-in for the camera adapter, whose real
// path (ffmpeg, the virtual board's camera) internal/cli tests end to end.
type paintedCamera struct {
	mu   sync.Mutex
	led  bool
	reqs []runner.GrabRequest
}

func (c *paintedCamera) grab(ctx context.Context, req runner.GrabRequest) ([]string, error) {
	c.mu.Lock()
	c.reqs = append(c.reqs, req)
	lit := c.led
	c.mu.Unlock()
	var out []string
	for i := 1; i <= req.Frames; i++ {
		img := image.NewRGBA(image.Rect(0, 0, 40, 30))
		for y := 10; y < 18; y++ {
			for x := 10; x < 18; x++ {
				if lit {
					img.Set(x, y, color.RGBA{40, 255, 40, 255})
				} else {
					img.Set(x, y, color.RGBA{30, 30, 30, 255})
				}
			}
		}
		name := fmt.Sprintf("%s-%d.png", req.Base, i)
		if req.Frames == 1 {
			name = req.Base + ".png"
		}
		p := filepath.Join(req.Dir, name)
		f, err := os.Create(p)
		if err != nil {
			return out, err
		}
		png.Encode(f, img)
		f.Close()
		out = append(out, p)
	}
	return out, nil
}

func TestCameraSteps(t *testing.T) {
	cam := &paintedCamera{}
	seq := load(t, `cameras: {top: /dev/video4}
steps:
  - set: {x: 1}
  - capture: {label: led_on, frames: 2}
    expect_image: [{region: [10, 10, 8, 8], brightness: ">0.6"}, {region: [10, 10, 8, 8], color: green, tolerance: 0.3}]
  - capture: {label: led_off}
    expect_image: {region: [10, 10, 8, 8], brightness: ">0.6"}
`)
	dir := t.TempDir()
	cam.led = true
	res := runner.Run(context.Background(), seq, runner.Bench{
		Camera: func(ctx context.Context, req runner.GrabRequest) ([]string, error) {
			if req.Base == "led_off" {
				cam.mu.Lock()
				cam.led = false
				cam.mu.Unlock()
			}
			return cam.grab(ctx, req)
		},
	}, runner.Options{
		KeepSteps:   true,
		ArtifactDir: dir,
	})
	if got := statuses(res); got != "0:passed 1:passed 2:failed" {
		t.Fatalf("statuses %s: %+v", got, res.Steps)
	}
	on, off := res.Steps[1], res.Steps[2]
	if len(on.Attachments) != 2 || on.Attachments[0] != filepath.Join(dir, "led_on-1.png") {
		t.Errorf("attachments %v", on.Attachments)
	}
	if cam.reqs[0].Camera.Name != "top" || cam.reqs[0].Camera.Input != "/dev/video4" || cam.reqs[0].Frames != 2 {
		t.Errorf("request %+v", cam.reqs[0])
	}
	checks := on.Data["checks"].([]map[string]any)
	if len(checks) != 4 || checks[0]["passed"] != true || checks[0]["brightness"].(float64) < 0.6 {
		t.Errorf("checks %v", checks)
	}
	want := "expect_image: [10, 10, 8, 8] of led_off.png: brightness 0.118, want >0.6"
	if off.Message != want {
		t.Errorf("dark LED message\n got %s\nwant %s", off.Message, want)
	}
	if len(off.Attachments) != 1 {
		t.Errorf("the failing picture is not attached: %v", off.Attachments)
	}
}

func TestCameraErrorIsTheBench(t *testing.T) {
	seq := load(t, "steps:\n  - capture: true\n")
	res := runner.Run(context.Background(), seq, runner.Bench{
		Camera: func(ctx context.Context, req runner.GrabRequest) ([]string, error) {
			if req.Camera.Input != "0" {
				t.Errorf("capture: true uses input %q, want the first camera", req.Camera.Input)
			}
			return nil, errors.New("/dev/video0 does not exist")
		},
	}, runner.Options{
		KeepSteps:   true,
		ArtifactDir: t.TempDir(),
	})
	if res.Status != runner.Errored || res.Steps[0].Message != "camera camera: /dev/video0 does not exist" {
		t.Fatalf("%s: %s", res.Status, res.Steps[0].Message)
	}
}

// lineDevice records modem-line calls on top of the line-oriented device.
type lineDevice struct {
	*device
	mu    sync.Mutex
	calls []string
	err   error
}

func (l *lineDevice) record(s string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.calls = append(l.calls, s)
	return l.err
}

func b2s(b *bool) string {
	if b == nil {
		return "-"
	}
	return fmt.Sprint(*b)
}

func (l *lineDevice) SetLines(ctx context.Context, dtr, rts *bool) error {
	return l.record("set dtr=" + b2s(dtr) + " rts=" + b2s(rts))
}
func (l *lineDevice) PulseLines(ctx context.Context, dtr, rts *bool, hold time.Duration) error {
	return l.record("pulse dtr=" + b2s(dtr) + " rts=" + b2s(rts) + " " + hold.String())
}
func (l *lineDevice) Break(ctx context.Context, d time.Duration) error {
	return l.record("break " + d.String())
}
func (l *lineDevice) ResetSequence(ctx context.Context, name string) error {
	return l.record("reset " + name)
}

type wrapped struct{ runner.Console }

func (w wrapped) Unwrap() runner.Console { return w.Console }

func TestLineSteps(t *testing.T) {
	seq := load(t, `steps:
  - lines: {dtr: false}
  - lines: {dtr: true, rts: false, hold: 20ms}
  - break: 250ms
  - reset_sequence: esp32
  - send: version
    expect: fw
`)
	ld := &lineDevice{device: newDevice(shell)}
	// Wrappers (the repl's, MCP's) offer the console they wrap.
	res := runner.Run(context.Background(), seq, runner.Bench{
		Open: func(ctx context.Context, d *steps.Device) (runner.Console, error) {
			return wrapped{wrapped{ld}}, nil
		},
	}, runner.Options{
		KeepSteps: true,
	})
	if res.Status != runner.Passed {
		t.Fatalf("%s %+v", res.Status, res.Steps)
	}
	want := "set dtr=false rts=-|pulse dtr=true rts=false 20ms|break 250ms|reset esp32"
	if got := strings.Join(ld.calls, "|"); got != want {
		t.Errorf("calls\n got %s\nwant %s", got, want)
	}

	// A console without modem lines (a pty) is the bench's problem.
	ld = &lineDevice{device: newDevice(shell), err: errors.New("/dev/pts/3 has no modem control lines")}
	res = runner.Run(context.Background(), load(t, "steps:\n  - reset_sequence: esp32\n"), runner.Bench{
		Open: func(ctx context.Context, d *steps.Device) (runner.Console, error) { return ld, nil },
	}, runner.Options{
		KeepSteps: true,
	})
	if res.Status != runner.Errored || res.Steps[0].Message != "reset_sequence on console: /dev/pts/3 has no modem control lines" {
		t.Fatalf("%s: %s", res.Status, res.Steps[0].Message)
	}
	res = runner.Run(context.Background(), load(t, "steps:\n  - break: 1ms\n"), runner.Bench{
		Open: func(ctx context.Context, d *steps.Device) (runner.Console, error) { return newDevice(shell), nil },
	}, runner.Options{
		KeepSteps: true,
	})
	if res.Status != runner.Errored || !strings.Contains(res.Steps[0].Message, "has no modem control lines") {
		t.Fatalf("%s: %s", res.Status, res.Steps[0].Message)
	}
}

func TestExecStep(t *testing.T) {
	dir := t.TempDir()
	seq := load(t, `vars: {who: board}
steps:
  - id: hello
    exec: [sh, -c, 'echo "hello $1"; echo "port 7" >&2', sh, "${who}"]
    expect: 'port (\d+)'
    regex: true
    save: port
  - exec: [sh, -c, "printf 'a\nb\n'"]
    save: listing
  - assert: port == "7" && listing == "a\nb" && steps.hello.exit_code == 0
  - exec: [sh, -c, "echo env=$GREETING; exit 3"]
    env: {GREETING: "hi ${who}"}
    exit_code: [0, 3]
    expect: env=hi board
  - exec: [sh, -c, "echo oops; exit 4"]
`)
	res := runner.Run(context.Background(), seq, runner.Bench{
		Host:    process.Runner{Policy: process.Permit(environ.Host())},
		OpenLog: openLog,
	}, runner.Options{
		KeepSteps:   true,
		ArtifactDir: dir,
	})
	if got := statuses(res); got != "0:passed 1:passed 2:passed 3:passed 4:failed" {
		t.Fatalf("statuses %s: %+v", got, res.Steps)
	}
	if m := res.Steps[4].Message; m != `sh exited with 4, want 0; last output: "oops"` {
		t.Errorf("message %s", m)
	}
	log, err := os.ReadFile(filepath.Join(dir, "exec-hello.log"))
	if err != nil || !strings.Contains(string(log), "hello board\n") || !strings.Contains(string(log), "[exit 0]") {
		t.Errorf("output log: %q %v", log, err)
	}

	// Timeouts fail the step and kill the command; a missing program is
	// the bench's problem.
	seq = load(t, "steps:\n  - exec: [sleep, \"30\"]\n    timeout: 100ms\n")
	begin := time.Now()
	res = runner.Run(context.Background(), seq, runner.Bench{
		Host:    process.Runner{Policy: process.Permit(environ.Host()), Grace: 100 * time.Millisecond},
		OpenLog: openLog,
	}, runner.Options{
		KeepSteps:   true,
		ArtifactDir: dir,
	})
	if res.Status != runner.Failed || res.Steps[0].Message != "sleep timed out after 100ms" || time.Since(begin) > 10*time.Second {
		t.Fatalf("timeout: %s %s", res.Status, res.Steps[0].Message)
	}
	seq = load(t, "steps:\n  - exec: [no-such-tool-hilrun]\n")
	res = runner.Run(context.Background(), seq, runner.Bench{
		Host:    process.Runner{Policy: process.Permit(environ.Host())},
		OpenLog: openLog,
	}, runner.Options{
		KeepSteps:   true,
		ArtifactDir: dir,
	})
	if res.Status != runner.Errored || !strings.Contains(res.Steps[0].Message, "no-such-tool-hilrun") {
		t.Fatalf("missing tool: %s %s", res.Status, res.Steps[0].Message)
	}
	seq = load(t, "steps:\n  - exec: [sh, -c, 'echo nothing']\n    expect: something\n")
	res = runner.Run(context.Background(), seq, runner.Bench{
		Host:    process.Runner{Policy: process.Permit(environ.Host())},
		OpenLog: openLog,
	}, runner.Options{
		KeepSteps:   true,
		ArtifactDir: dir,
	})
	if res.Status != runner.Failed || res.Steps[0].Message != `the output of sh has no "something"` || !strings.Contains(res.Steps[0].Received, "nothing") {
		t.Fatalf("expect: %s %q %q", res.Status, res.Steps[0].Message, res.Steps[0].Received)
	}
}

func TestPowerStep(t *testing.T) {
	dir := t.TempDir()
	state := filepath.Join(dir, "state")
	seq := load(t, fmt.Sprintf(`power:
  dut:
    on: [sh, -c, "echo on >> %[1]s"]
    off: [sh, -c, "echo off >> %[1]s"]
    off_time: 50ms
  hub:
    cycle: "echo cycle >> %[1]s; exit 2"
    shell: true
steps:
  - power: {device: dut, action: cycle}
  - power: {device: dut, action: "off"}
  - power: {device: hub, action: cycle}
`, state))
	res := runner.Run(context.Background(), seq, runner.Bench{
		Host:    process.Runner{Policy: process.Permit(environ.Host())},
		OpenLog: openLog,
	}, runner.Options{
		KeepSteps:   true,
		ArtifactDir: dir,
	})
	if got := statuses(res); got != "0:passed 1:passed 2:error" {
		t.Fatalf("statuses %s: %+v", got, res.Steps)
	}
	if b, _ := os.ReadFile(state); string(b) != "off\non\noff\ncycle\n" {
		t.Errorf("commands ran as %q", b)
	}
	if m := res.Steps[2].Message; m != "power cycle hub: sh exited with 2" {
		t.Errorf("message %q", m)
	}
}

// A command that prints a lot, or a long line without an end, is searched
// at its beginning and its end, in bounded memory.
func TestExecLongOutput(t *testing.T) {
	dir := t.TempDir()
	seq := load(t, `steps:
  - exec: [sh, -c, 'echo START; head -c 3000000 /dev/zero | tr "\0" x; echo; echo DONE 42']
    expect: 'DONE (\d+)'
    regex: true
    save: n
  - exec: [sh, -c, 'echo START; head -c 3000000 /dev/zero | tr "\0" x']
    expect: START
  - exec: [sh, -c, 'head -c 3000000 /dev/zero | tr "\0" x; echo; echo END']
    expect: MIDDLE
`)
	res := runner.Run(context.Background(), seq, runner.Bench{
		Host:    process.Runner{Policy: process.Permit(environ.Host())},
		OpenLog: openLog,
	}, runner.Options{
		KeepSteps:   true,
		ArtifactDir: dir,
	})
	if got := statuses(res); got != "0:passed 1:passed 2:failed" {
		t.Fatalf("statuses %s: %+v", got, res.Steps)
	}
	if savedVar(res, "n") != "42" {
		t.Errorf("saved %v", savedVar(res, "n"))
	}
	if m := res.Steps[2].Message; !strings.Contains(m, "searched its first 64 KiB and last 960 KiB") {
		t.Errorf("message %s", m)
	}
	if out := res.Steps[0].Data["output"].(string); len(out) > 64<<10 || !strings.HasSuffix(out, "DONE 42\n") {
		t.Errorf("data output: %d bytes ending %q", len(out), out[max(0, len(out)-20):])
	}
	if fi, err := os.Stat(filepath.Join(dir, "exec-0.log")); err != nil || fi.Size() < 3000000 {
		t.Errorf("the log lost output: %v %v", fi, err)
	}
}

// A flasher run by exec opens the port itself: hilrun lets go of it for
// the command, tells it where it is, and takes it back after.
func TestExecReleasesItsPort(t *testing.T) {
	seq := load(t, `
devices:
  dut: {port: /dev/ttyUSB7}
steps:
  - exec: [sh, -c, 'echo "flashing $HILRUN_PORT"']
    port: dut
    expect: flashing /dev/ttyUSB7
  - expect: app started
`)
	dev := &handoverDevice{device: newDevice(shell)}
	res := runner.Run(context.Background(), seq, runner.Bench{
		Open:    func(ctx context.Context, d *steps.Device) (runner.Console, error) { return dev, nil },
		Host:    process.Runner{Policy: process.Permit(environ.Host())},
		OpenLog: openLog,
	}, runner.Options{
		KeepSteps:   true,
		ArtifactDir: t.TempDir(),
	})
	if res.Status != runner.Passed {
		t.Fatalf("%s: %+v", res.Status, res.Steps)
	}
	if got := strings.Join(dev.events, ","); got != "release,reacquire" {
		t.Errorf("events %s", got)
	}
}

func TestLineWriterPieces(t *testing.T) {
	var got []int
	w := runner.NewLineWriterForTest(func(l string) { got = append(got, len(l)) })
	w.Write([]byte(strings.Repeat("x", 10000) + "\n" + "short\n" + strings.Repeat("y", 8192) + "\n"))
	want := []int{4096, 4096, 1808, 5, 4096, 4096}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("pieces %v, want %v", got, want)
	}
}

// openLog keeps host command logs as hilrun's bench does.
func openLog(what, path string) (runner.Log, error) {
	f, err := logfile.Append(what, path)
	if err != nil {
		return nil, err
	}
	return testLog{f}, nil
}

type testLog struct{ *logfile.File }

func (l testLog) Loss() error {
	if e := l.File.Loss(); e != nil {
		return e
	}
	return nil
}

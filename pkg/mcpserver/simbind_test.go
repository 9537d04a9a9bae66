package mcpserver

import (
	"context"
	"errors"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/steps"
)

// --sim binds only what is still unbound, as in hilrun run and repl: a
// device and a camera the bench file binds stay the bench's; the others
// go to the virtual board.
func TestSimBindsOnlyUnbound(t *testing.T) {
	other := sim.New(sim.Options{})
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	bench := &steps.Bench{
		Devices: map[string]*steps.Device{"dut": {Name: "dut", Port: other.SerialPath()}},
		Cameras: map[string]*steps.Camera{"top": {Name: "top", Input: "/dev/video7"}},
	}
	var asked []string
	grab := func(ctx context.Context, req runner.GrabRequest) ([]string, error) {
		asked = append(asked, req.Camera.Input)
		return nil, errors.New("no camera here")
	}
	e := newEnv(t, envOptions{sim: true, camera: grab, config: func(c *Config) {
		c.Bench = bench
		c.Camera, c.CameraFormat = "http://127.0.0.1:1/sim.mjpeg", "mpjpeg"
	}})
	out := e.sequence(map[string]any{"steps": map[string]any{
		"devices": map[string]any{"dut": map[string]any{}, "board": map[string]any{}},
		"steps": []any{
			map[string]any{"send": "led on", "to": "dut", "expect": "LED on"},
			map[string]any{"send": "status", "to": "dut", "expect": "led: on"},
			map[string]any{"send": "status", "to": "board", "expect": "led: off"},
		},
	}})
	if !out.Passed {
		t.Fatalf("the bench's device went to the virtual board: %s %s", statuses(out), out.Error)
	}
	e.sequence(map[string]any{"steps": map[string]any{
		"cameras": map[string]any{"top": map[string]any{}},
		"steps":   []any{map[string]any{"capture": map[string]any{"camera": "top"}}},
	}})
	e.sequence(map[string]any{"steps": []any{map[string]any{"capture": true}}})
	if len(asked) != 2 || asked[0] != "/dev/video7" || asked[1] != "http://127.0.0.1:1/sim.mjpeg" {
		t.Errorf("cameras asked: %q, want the bench's /dev/video7, then the virtual board's", asked)
	}
}

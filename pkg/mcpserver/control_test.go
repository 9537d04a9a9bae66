package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

func TestReadOnlyRefusesBenchControl(t *testing.T) {
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Policy.ReadOnly = true; c.Policy.Roots = []string{t.TempDir()} }})
	for _, step := range []map[string]any{
		{"lines": map[string]any{"dtr": false}},
		{"break": "100ms"},
		{"reset_sequence": "esp32"},
		{"exec": []any{"true"}},
		{"power": "cycle"},
	} {
		msg := e.callErr("serial_sequence", map[string]any{"steps": []any{step}})
		if !strings.Contains(msg, "read-only") && !strings.Contains(msg, "bench file") {
			t.Errorf("%v: %s", step, msg)
		}
	}
	// The board was not touched: nothing ran.
	e.srv.runs.mu.Lock()
	got := len(e.srv.runs.runs)
	e.srv.runs.mu.Unlock()
	if got != 0 {
		t.Errorf("%d runs happened", got)
	}
}

func TestExecAndPowerOverMCP(t *testing.T) {
	root := t.TempDir()
	state := filepath.Join(root, "state")
	benchFile := filepath.Join(root, "hilrun.bench.yaml")
	if err := os.WriteFile(benchFile, []byte(`power:
  dut: {on: [sh, -c, "echo on >> `+state+`"], off: [sh, -c, "echo off >> `+state+`"], off_time: 10ms}
`), 0o644); err != nil {
		t.Fatal(err)
	}
	bench, err := steps.LoadBench(benchFile)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Policy.Roots = []string{root}; c.Bench = bench }})
	res := e.call("serial_sequence", map[string]any{"steps": []any{
		map[string]any{"exec": []any{"sh", "-c", "pwd; echo made > out.txt"}, "save": "where"},
		map[string]any{"power": map[string]any{"device": "dut", "action": "cycle"}},
	}})
	if !strings.Contains(text(res), "passed") {
		t.Fatalf("result: %s", text(res))
	}
	if b, err := os.ReadFile(filepath.Join(root, "out.txt")); err != nil || string(b) != "made\n" {
		t.Errorf("exec did not run in the root: %q %v", b, err)
	}
	if b, _ := os.ReadFile(state); string(b) != "off\non\n" {
		t.Errorf("power ran %q", b)
	}
	// A sequence cannot bring its own power commands, nor a shell.
	seqFile := filepath.Join(root, "own-power.yaml")
	if err := os.WriteFile(seqFile, []byte("power: {board: {on: [rm, -rf, x], off: [\"true\"]}}\nsteps:\n  - power: {device: board, action: cycle}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	msg := e.callErr("run_sequence", map[string]any{"path": seqFile})
	if !strings.Contains(msg, "power commands come from the server's bench file") {
		t.Errorf("sequence power entry: %s", msg)
	}
	msg = e.callErr("serial_sequence", map[string]any{"steps": []any{map[string]any{"exec": "echo hi", "shell": true}}})
	if !strings.Contains(msg, "shell: true is not run over MCP") {
		t.Errorf("shell: %s", msg)
	}
}

func TestCapturePicturesAreImageContent(t *testing.T) {
	var asked []runner.GrabRequest
	grab := func(ctx context.Context, req runner.GrabRequest) ([]string, error) {
		asked = append(asked, req)
		img := image.NewRGBA(image.Rect(0, 0, 8, 8))
		for i := range img.Pix {
			img.Pix[i] = 0xff
		}
		img.Set(0, 0, color.Black)
		if err := os.MkdirAll(req.Dir, 0o755); err != nil {
			return nil, err
		}
		p := filepath.Join(req.Dir, req.Base+".png")
		f, err := os.Create(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		return []string{p}, png.Encode(f, img)
	}
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Grab = grab; c.Camera = "http://sim/stream.mjpg"; c.CameraFormat = "mpjpeg" }})
	res := e.call("serial_sequence", map[string]any{"steps": []any{
		map[string]any{"capture": true, "label": "my_label", "device_index": 0},
		map[string]any{"expect_image": map[string]any{"region": []any{2, 2, 4, 4}, "brightness": ">0.9"}},
	}})
	var images []mcp.ImageContent
	for _, c := range res.Content {
		if im, ok := c.(mcp.ImageContent); ok {
			images = append(images, im)
		}
	}
	if len(images) != 2 || images[0].MIMEType != "image/png" {
		t.Fatalf("image content: %d items in %s", len(images), text(res))
	}
	data, err := base64.StdEncoding.DecodeString(images[0].Data)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(strings.NewReader(string(data))); err != nil {
		t.Errorf("image content is not a PNG: %v", err)
	}
	if asked[0].Camera.Input != "http://sim/stream.mjpg" || asked[0].Camera.Format != "mpjpeg" || asked[0].Base != "my_label" {
		t.Errorf("grab request %+v camera %+v", asked[0], asked[0].Camera)
	}
	var out sequenceResult
	b, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Pictures) != 2 || !strings.HasSuffix(out.Pictures[0], "/files/my_label.png") {
		t.Errorf("pictures %v", out.Pictures)
	}
}

package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"image"
	"image/color"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/gate/files"
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
	bench, err := steps.LoadBench(files.Anywhere(), benchFile)
	if err != nil {
		t.Fatal(err)
	}
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Policy.Roots = []string{root}; c.Policy.AllowExec = true; c.Bench = bench }})
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
	e := newEnv(t, envOptions{sim: true, camera: grab, config: func(c *Config) {
		c.Camera = "http://sim/stream.mjpg"
		c.CameraFormat = "mpjpeg"
	}})
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
	if len(out.Pictures) != 2 || !strings.HasPrefix(out.Pictures[0], "hilrun://runs/") || !strings.HasSuffix(out.Pictures[0], "/files/my_label.png") {
		t.Fatalf("pictures %v", out.Pictures)
	}
	// Each picture is a resource, for clients that cannot read the
	// server's files.
	rr, err := e.c.ReadResource(context.Background(), mcp.ReadResourceRequest{Params: mcp.ReadResourceParams{URI: out.Pictures[0]}})
	if err != nil {
		t.Fatal(err)
	}
	blob, ok := rr.Contents[0].(mcp.BlobResourceContents)
	if !ok || blob.MIMEType != "image/png" || blob.Blob != images[0].Data {
		t.Errorf("picture resource: %T %+v", rr.Contents[0], rr.Contents[0])
	}

	// Many pictures: the last 8 come back, the others are named.
	res = e.call("serial_sequence", map[string]any{"steps": []any{
		map[string]any{"repeat": 10, "steps": []any{map[string]any{"capture": true, "label": "many"}}},
	}})
	images = nil
	for _, c := range res.Content {
		if im, ok := c.(mcp.ImageContent); ok {
			images = append(images, im)
		}
	}
	if len(images) != 8 || !strings.Contains(text(res), "2 more picture(s) are not shown here; read them as resources: hilrun://runs/") {
		t.Errorf("%d images; %s", len(images), text(res))
	}
}

// A client names cameras; it cannot point ffmpeg at files, URLs or filter
// graphs, nor hand it arguments.
func TestClientCannotBringCameras(t *testing.T) {
	root := t.TempDir()
	benchFile := filepath.Join(root, "hilrun.bench.yaml")
	if err := os.WriteFile(benchFile, []byte("cameras:\n  top: {input: /dev/video7, size: 640x480}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bench, err := steps.LoadBench(files.Anywhere(), benchFile)
	if err != nil {
		t.Fatal(err)
	}
	var asked []*steps.Camera
	grab := func(ctx context.Context, req runner.GrabRequest) ([]string, error) {
		asked = append(asked, req.Camera)
		return nil, errors.New("no camera here")
	}
	e := newEnv(t, envOptions{camera: grab, config: func(c *Config) { c.Bench = bench }})
	secret := filepath.Join(root, "secret.png")
	for _, steps := range []any{
		[]any{map[string]any{"capture": map[string]any{"camera": secret}}},
		[]any{map[string]any{"capture": map[string]any{"camera": "http://127.0.0.1:1/x"}}},
		map[string]any{
			"cameras": map[string]any{"evil": map[string]any{"input": "testsrc", "format": "lavfi", "args": []any{"-i", "x", secret}}},
			"steps":   []any{map[string]any{"capture": map[string]any{"camera": "evil"}}},
		},
		map[string]any{
			"cameras": map[string]any{"mine": secret},
			"steps":   []any{map[string]any{"capture": map[string]any{"camera": "mine"}}},
		},
		// The bench's camera by name, with the client's settings: they
		// are refused, not overridden.
		map[string]any{
			"cameras": map[string]any{"top": map[string]any{"input": secret, "format": "image2"}},
			"steps":   []any{map[string]any{"capture": map[string]any{"camera": "top"}}},
		},
		map[string]any{
			"cameras": map[string]any{"top": map[string]any{"args": []any{"-i", secret}}},
			"steps":   []any{map[string]any{"capture": map[string]any{"camera": "top"}}},
		},
	} {
		msg := e.callErr("serial_sequence", map[string]any{"steps": steps})
		if !strings.Contains(msg, "cameras come from the server's bench file") {
			t.Errorf("%v: %s", steps, msg)
		}
	}
	if len(asked) != 0 {
		t.Fatalf("ffmpeg was asked for %v", asked[0])
	}
	// The bench's camera by name, and a camera device by number, are
	// fine.
	e.sequence(map[string]any{"steps": map[string]any{
		"cameras": map[string]any{"top": map[string]any{"size": "320x240"}},
		"steps":   []any{map[string]any{"capture": map[string]any{"camera": "top"}}},
	}})
	e.sequence(map[string]any{"steps": []any{map[string]any{"capture": true, "device_index": 2}}})
	if len(asked) != 2 || asked[0].Input != "/dev/video7" || asked[0].Format != "" || asked[1].Input != "2" {
		t.Errorf("cameras asked: %+v %+v", asked[0], asked[1])
	}
}

func TestExecIsOptInAndSeesNoSecrets(t *testing.T) {
	t.Setenv("HILRUN_MCP_TOKEN", "s3cret")
	root := t.TempDir()
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Policy.Roots = []string{root} }})
	msg := e.callErr("serial_sequence", map[string]any{"steps": []any{map[string]any{"exec": []any{"true"}}}})
	if !strings.Contains(msg, "start hilrun mcp with --allow-exec") {
		t.Errorf("exec without --allow-exec: %s", msg)
	}
	e = newEnv(t, envOptions{sim: true, config: func(c *Config) { c.Policy.Roots = []string{root}; c.Policy.AllowExec = true }})
	out := e.sequence(map[string]any{"steps": []any{
		map[string]any{"exec": []any{"sh", "-c", "echo token=$HILRUN_MCP_TOKEN; echo path=$PATH"}, "env": map[string]any{"EXTRA": "1"}, "expect": "token=\n"},
	}})
	if !out.Passed {
		t.Errorf("the command saw the server's token: %+v", out.Steps)
	}
	// Nor when the server's environment has none of the variables passed
	// on.
	for _, k := range []string{"PATH", "HOME", "USER", "LANG", "LC_ALL", "TZ", "TMPDIR"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	out = e.sequence(map[string]any{"steps": []any{
		map[string]any{"exec": []any{"/bin/sh", "-c", "echo token=$HILRUN_MCP_TOKEN"}, "expect": "token=\n"},
	}})
	if !out.Passed {
		t.Errorf("with an empty environment, the command saw the server's token: %+v", out.Steps)
	}
}

// exec steps take no console: with none open and no --sim they run; an
// exec's port may name a connection, released for the command.
func TestExecWithoutAndWithConnection(t *testing.T) {
	root := t.TempDir()
	e := newEnv(t, envOptions{config: func(c *Config) { c.Policy.Roots = []string{root}; c.Policy.AllowExec = true }})
	if out := e.sequence(map[string]any{"steps": []any{map[string]any{"exec": []any{"echo", "hi"}, "expect": "hi"}}}); !out.Passed {
		t.Fatalf("exec without a console: %+v", out.Steps)
	}
	id := e.open(nil)
	out := e.sequence(map[string]any{"steps": []any{
		map[string]any{"exec": []any{"sh", "-c", "echo port=$HILRUN_PORT"}, "port": id, "expect": "port=" + e.board.SerialPath()},
		map[string]any{"send": "echo back", "to": id, "expect": "back"},
	}})
	if !out.Passed {
		t.Errorf("exec with port %s: %+v", id, out.Steps)
	}
}

// Modem line steps reach a connection opened with serial_open, by id and
// by default; the virtual board's pty has no modem lines, and says so.
func TestLinesOnAConnection(t *testing.T) {
	e := newEnv(t, envOptions{})
	id := e.open(nil)
	for _, step := range []map[string]any{
		{"break": "250ms", "to": id},
		{"reset_sequence": "esp32"},
		{"lines": map[string]any{"dtr": false}, "to": id},
	} {
		out := e.sequence(map[string]any{"steps": []any{step}})
		if len(out.Steps) != 1 || out.Steps[0].Status != "error" || !strings.Contains(out.Steps[0].Message, "has no modem control lines") {
			t.Errorf("%v: %+v", step, out.Steps)
		}
	}
	// The connection still works.
	e.call("serial_write", map[string]any{"connection": id, "data": "echo alive", "newline": true})
}

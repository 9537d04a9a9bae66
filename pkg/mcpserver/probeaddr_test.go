package mcpserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/creack/pty"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// TestCheckProbeTarget checks that a probe's address passes the same
// checks wherever it came from: the server's own debuggers pass, any other
// needs --allow-probe (and is refused on a read-only server), and a path
// passes the port globs, links followed, the bench's too.
func TestCheckProbeTarget(t *testing.T) {
	root := t.TempDir()
	master, tty, err := pty.Open()
	if err != nil {
		t.Fatal(err)
	}
	defer master.Close()
	defer tty.Close()
	ptyPath := tty.Name()
	link := filepath.Join(root, "pty-link")
	if err := os.Symlink(ptyPath, link); err != nil {
		t.Fatal(err)
	}
	bench := &steps.Bench{Probes: map[string]*steps.Probe{
		"bmp": {Name: "bmp", GDB: "/dev/pts/78"},
		"ocd": {Name: "ocd", OpenOCD: "10.0.0.5:4444"},
	}}
	for _, tc := range []struct {
		name   string
		policy Policy
		probe  steps.Probe
		want   string // "" means allowed
	}{
		{name: "the virtual board's", probe: steps.Probe{OpenOCD: "127.0.0.1:4444"}},
		{name: "the bench's OpenOCD", probe: steps.Probe{OpenOCD: "10.0.0.5:4444"}},
		{name: "a launched OpenOCD", probe: steps.Probe{Launch: &steps.Launch{Config: []string{"interface/stlink.cfg"}}}},
		{name: "a local service", probe: steps.Probe{GDB: "127.0.0.1:22"}, want: "--allow-probe"},
		{name: "an OpenOCD elsewhere", probe: steps.Probe{OpenOCD: "10.0.0.6:4444"}, want: "--allow-probe"},
		{name: "allowed by glob", policy: Policy{AllowProbes: []string{"127.0.0.1:*"}}, probe: steps.Probe{GDB: "127.0.0.1:3333"}},
		{name: "allowed by glob on a read-only server", policy: Policy{ReadOnly: true, AllowProbes: []string{"127.0.0.1:*"}}, probe: steps.Probe{GDB: "127.0.0.1:3333"}, want: "read-only"},
		{name: "the bench's on a read-only server", policy: Policy{ReadOnly: true}, probe: steps.Probe{OpenOCD: "10.0.0.5:4444"}},
		{name: "a pty", probe: steps.Probe{GDB: "/dev/pts/77"}, want: "--allow-probe"},
		{name: "a denied pty", policy: Policy{AllowProbes: []string{"/dev/pts/*"}, DenyPorts: []string{"/dev/pts/77"}}, probe: steps.Probe{GDB: "/dev/pts/77"}, want: "--deny-port"},
		{name: "a link to a denied pty", policy: Policy{AllowProbes: []string{root + "/*"}, DenyPorts: []string{ptyPath}}, probe: steps.Probe{GDB: link}, want: "--deny-port"},
		{name: "a pty outside --allow-port", policy: Policy{AllowProbes: []string{"/dev/pts/*"}, AllowPorts: []string{"/dev/ttyACM*"}}, probe: steps.Probe{GDB: "/dev/pts/77"}, want: "--allow-port"},
		{name: "the bench's pty", probe: steps.Probe{GDB: "/dev/pts/78"}},
		{name: "the bench's pty denied", policy: Policy{DenyPorts: []string{"/dev/pts/*"}}, probe: steps.Probe{GDB: "/dev/pts/78"}, want: "--deny-port"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &Server{cfg: Config{Policy: tc.policy, Bench: bench, DefaultOpenOCD: "127.0.0.1:4444"}}
			p := tc.probe
			p.Name = "p"
			err := s.checkProbeTarget(&p)
			if tc.want == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want a refusal naming %q", err, tc.want)
			}
		})
	}
}

// TestProbeBenchPathDenied checks that a probe the bench binds to a device
// that --deny-port refuses is refused by every tool that opens probes.
func TestProbeBenchPathDenied(t *testing.T) {
	bench := &steps.Bench{Probes: map[string]*steps.Probe{"bmp": {Name: "bmp", GDB: "/dev/pts/79"}}}
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) {
		c.Bench = bench
		c.Policy.DenyPorts = []string{"/dev/pts/79"}
	}})
	if msg := e.callErr("mem_read", map[string]any{"probe": "bmp", "address": "0x20000000"}); !strings.Contains(msg, "--deny-port") {
		t.Errorf("mem_read: %s", msg)
	}
	if msg := e.callErr("serial_sequence", map[string]any{"steps": []any{map[string]any{"halt": true, "probe": "bmp"}}}); !strings.Contains(msg, "--deny-port") {
		t.Errorf("halt: %s", msg)
	}
}

// TestSimRefusesClientCameras checks that under --sim a client's camera
// input, format and args are refused on every path, and that the virtual
// board's camera runs with the policy's environment.
func TestSimRefusesClientCameras(t *testing.T) {
	t.Setenv("HILRUN_MCP_TOKEN", "s3cret-token")
	root := t.TempDir()
	files := map[string]string{
		"cam.yaml":                 "cameras:\n  top: {input: /proc/self/environ, format: rawvideo}\nsteps:\n  - capture: {camera: top}\n",
		"beside/hilrun.bench.yaml": "cameras:\n  top: http://127.0.0.1:1/x\n",
		"beside/seq.yaml":          "steps:\n  - capture: {camera: top}\n",
	}
	for name, data := range files {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var asked []runner.GrabRequest
	grab := func(ctx context.Context, req runner.GrabRequest) ([]string, error) {
		asked = append(asked, req)
		return nil, errors.New("no camera here")
	}
	e := newEnv(t, envOptions{sim: true, camera: grab, config: func(c *Config) {
		c.Policy.Roots = []string{root}
		c.Camera, c.CameraFormat = "http://127.0.0.1:1/sim.mjpeg", "mpjpeg"
	}})
	for _, tc := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"mapping", "serial_sequence", map[string]any{"steps": map[string]any{
			"cameras": map[string]any{"evil": map[string]any{"input": "x", "format": "lavfi", "args": []any{"-y", "/tmp/x"}}},
			"steps":   []any{map[string]any{"capture": map[string]any{"camera": "evil"}}},
		}}},
		{"args only", "serial_sequence", map[string]any{"steps": map[string]any{
			"cameras": map[string]any{"evil": map[string]any{"args": []any{"-y", "/tmp/x"}}},
			"steps":   []any{map[string]any{"capture": map[string]any{"camera": "evil"}}},
		}}},
		{"YAML string", "serial_sequence", map[string]any{"steps": "cameras:\n  evil: /etc/passwd\nsteps:\n  - capture: {camera: evil}\n"}},
		{"file", "run_sequence", map[string]any{"path": "cam.yaml"}},
		{"bench beside a file", "run_sequence", map[string]any{"path": "beside/seq.yaml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if msg := e.callErr(tc.tool, tc.args); !strings.Contains(msg, "never with an input, format or args a client gives") {
				t.Errorf("%s", msg)
			}
		})
	}
	if len(asked) != 0 {
		t.Fatalf("ffmpeg was asked for %+v", asked[0].Camera)
	}
	e.sequence(map[string]any{"steps": map[string]any{
		"cameras": map[string]any{"top": map[string]any{"size": "320x240"}},
		"steps":   []any{map[string]any{"capture": map[string]any{"camera": "top"}}},
	}})
	if len(asked) != 1 || asked[0].Camera.Input != "http://127.0.0.1:1/sim.mjpeg" {
		t.Fatalf("cameras asked: %+v", asked)
	}
	// The camera program starts through the server's process gate, whose
	// environment is the policy's minimal one.
	if env := e.srv.cfg.Gates.Procs.Env.List(); slices.ContainsFunc(env, func(v string) bool { return strings.Contains(v, "s3cret-token") }) {
		t.Errorf("the environment of the programs the server starts holds its token: %q", env)
	}
}

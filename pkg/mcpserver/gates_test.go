package mcpserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/dial"
	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

// TestServerGates: the server's gates apply its policy where each effect
// happens, whatever asked for it: programs, addresses, devices, files and
// the environment.
func TestServerGates(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	t.Setenv("HILRUN_MCP_TOKEN", "s3cret-token-for-gates")
	bench := &steps.Bench{
		Devices: map[string]*steps.Device{"net": {Name: "net", Port: "tcp://10.1.2.3:2000"}},
		Probes:  map[string]*steps.Probe{"p": {Name: "p", OpenOCD: "tcl://10.9.9.9:6666"}},
	}
	cfg := Config{
		Policy:         Policy{Roots: []string{root}, AllowExec: true, AllowProbes: []string{"10.0.0.5:*"}, DenyPorts: []string{"/dev/ttyS*"}, Env: environ.Host()},
		DefaultOpenOCD: "127.0.0.1:4444",
		DefaultGDB:     "/run/hilrun-qemu/gdb",
		Bench:          bench,
	}
	if err := cfg.Policy.Validate(); err != nil {
		t.Fatal(err)
	}
	g := cfg.ServerGates()

	t.Run("programs", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			st   process.Start
			ok   bool
		}{
			{"host command in a root", process.Start{Purpose: process.HostCommand, Args: []string{"make"}, Dir: root}, true},
			{"host command outside the roots", process.Start{Purpose: process.HostCommand, Args: []string{"make"}, Dir: outside}, false},
			{"host command in no folder", process.Start{Purpose: process.HostCommand, Args: []string{"make"}}, false},
			{"debugger server", process.Start{Purpose: process.DebugServer, Args: []string{"openocd"}}, true},
			{"camera", process.Start{Purpose: process.Camera, Args: []string{"ffmpeg"}}, true},
			{"a purpose nobody described", process.Start{Purpose: 99, Args: []string{"x"}}, false},
		} {
			err := g.Procs.Allow(tc.st)
			if (err == nil) != tc.ok || (err != nil && !errors.Is(err, ErrRefused)) {
				t.Errorf("%s: %v, want allowed %v", tc.name, err, tc.ok)
			}
		}
		ro := cfg
		ro.Policy.ReadOnly = true
		if err := ro.ServerGates().Procs.Allow(process.Start{Purpose: process.HostCommand, Args: []string{"make"}, Dir: root}); err == nil {
			t.Error("a read-only server started a host command")
		}
		noExec := cfg
		noExec.Policy.AllowExec = false
		if err := noExec.ServerGates().Procs.Allow(process.Start{Purpose: process.HostCommand, Args: []string{"make"}, Dir: root}); err == nil {
			t.Error("a server without --allow-exec started a host command")
		}
		if env := strings.Join(g.Procs.Env.List(), "\n"); strings.Contains(env, "s3cret-token-for-gates") || !strings.Contains(env, "PATH=") {
			t.Errorf("the programs' environment: %q, want PATH and no token", env)
		}
	})

	t.Run("addresses", func(t *testing.T) {
		for _, tc := range []struct {
			name string
			t    dial.Target
			ok   bool
		}{
			{"the server's OpenOCD", dial.Target{Purpose: dial.Probe, Network: "tcp", Address: "127.0.0.1:4444"}, true},
			{"the bench's OpenOCD, its scheme aside", dial.Target{Purpose: dial.Probe, Network: "tcp", Address: "10.9.9.9:6666"}, true},
			{"the server's QEMU socket", dial.Target{Purpose: dial.Probe, Network: "unix", Address: "/run/hilrun-qemu/gdb"}, true},
			{"another socket", dial.Target{Purpose: dial.Probe, Network: "unix", Address: "/run/user/1000/bus"}, false},
			{"an --allow-probe address", dial.Target{Purpose: dial.Probe, Network: "tcp", Address: "10.0.0.5:3333"}, true},
			{"any other debugger", dial.Target{Purpose: dial.Probe, Network: "tcp", Address: "127.0.0.1:6379"}, false},
			{"the bench's network console", dial.Target{Purpose: dial.Console, Network: "tcp", Address: "10.1.2.3:2000"}, true},
			{"a network console nothing allows", dial.Target{Purpose: dial.Console, Network: "tcp", Address: "127.0.0.1:6379"}, false},
			{"a launched server on loopback", dial.Target{Purpose: dial.Launched, Network: "tcp", Address: "127.0.0.1:40001"}, true},
			{"a launched server elsewhere", dial.Target{Purpose: dial.Launched, Network: "tcp", Address: "10.0.0.1:40001"}, false},
		} {
			err := g.Dial.Allow(tc.t)
			if (err == nil) != tc.ok {
				t.Errorf("%s: %v, want allowed %v", tc.name, err, tc.ok)
			}
		}
		// Through the gate itself: nothing is dialled.
		if _, err := g.Dial.Dial(context.Background(), dial.Probe, "tcp", "127.0.0.1:6379"); !errors.Is(err, ErrRefused) {
			t.Errorf("dial past the policy: %v", err)
		}
	})

	t.Run("devices", func(t *testing.T) {
		if err := g.Devices.Allow("/dev/ttyS0", "/dev/ttyS0"); !errors.Is(err, ErrRefused) {
			t.Errorf("a --deny-port device: %v", err)
		}
		link := filepath.Join(t.TempDir(), "console")
		if err := os.Symlink("/dev/ttyS0", link); err != nil {
			t.Fatal(err)
		}
		// serialx opens through the gate: the link leads to a denied port.
		_, err := serialx.Open(context.Background(), "dut", serialx.Config{Path: link, NoLock: true, Devices: g.Devices})
		if !errors.Is(err, ErrRefused) {
			t.Errorf("open a link to a --deny-port device: %v", err)
		}
	})

	t.Run("files", func(t *testing.T) {
		in := filepath.Join(root, "seq.yaml")
		if err := os.WriteFile(in, []byte("steps: []\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		secret := filepath.Join(outside, "secret")
		if err := os.WriteFile(secret, []byte("key"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(secret, filepath.Join(root, "link")); err != nil {
			t.Fatal(err)
		}
		if _, err := g.Files.ReadFile(in); err != nil {
			t.Errorf("a file under the root: %v", err)
		}
		for _, name := range []string{secret, filepath.Join(root, "link"), filepath.Join(root, "..", filepath.Base(outside), "secret")} {
			if b, err := g.Files.ReadFile(name); !errors.Is(err, files.ErrRefused) {
				t.Errorf("read %s: %q, %v; want it refused", name, b, err)
			}
		}
	})

	if env := g.Env.List(); len(env) != 0 {
		t.Errorf("expressions see %q, want nothing", env)
	}
}

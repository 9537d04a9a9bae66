package mcpserver

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/internal/ser2net"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// TestNetworkConsole opens the virtual board through Debian's ser2net as
// an MCP connection, raw and with RFC 2217: send/expect works, an upload
// step releases the connection and takes it back over the network, and a
// reset sequence on a raw socket fails saying why.
func TestNetworkConsole(t *testing.T) {
	if _, err := ser2net.Path(); err != nil {
		testenv.Missing(t, "%v", err)
	}
	for _, mode := range []ser2net.Mode{ser2net.Raw, ser2net.RFC2217} {
		t.Run(string(mode), func(t *testing.T) {
			// A network console needs an --allow-port glob that names it.
			e := rootEnv(t, envOptions{config: func(c *Config) {
				c.Policy.AllowPorts = []string{"tcp://127.0.0.1:*", "rfc2217://127.0.0.1:*", "/dev/pts/*"}
			}}, t.TempDir())
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			srv, err := ser2net.Start(ctx, t.TempDir(), e.board.SerialPath(), mode)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(srv.Stop)
			c1 := e.open(map[string]any{"port": srv.URL()})
			out := e.sequence(map[string]any{"steps": []any{
				map[string]any{"send": "echo first", "expect": "first", "to": c1},
				map[string]any{"upload": map[string]any{"command": []any{"true"}, "port": c1}},
				map[string]any{"send": "echo again", "expect": "again", "to": c1},
			}})
			if !out.Passed {
				t.Fatalf("sequence: %s %+v", statuses(out), out.Steps)
			}
			conn, err := e.srv.connection(c1)
			if err != nil {
				t.Fatal(err)
			}
			if got := conn.console.(interface{ Opens() int64 }).Opens(); got != 2 {
				t.Errorf("the connection opened %d times, want 2: the upload releases it and it is taken back", got)
			}
			if mode != ser2net.Raw {
				return
			}
			out = e.sequence(map[string]any{"steps": []any{
				map[string]any{"reset_sequence": "esp32", "to": c1},
			}})
			msg, _ := json.Marshal(out.Steps)
			if out.Passed || !strings.Contains(string(msg), "is a raw socket: it has no modem lines; use rfc2217://") {
				t.Errorf("a reset sequence on a raw socket: %s %s", statuses(out), msg)
			}
		})
	}
}

// A network console is refused unless an --allow-port glob names it: a
// client could otherwise reach any host, OpenOCD's Tcl server or a GDB
// stub, which run host commands. Other spellings of a port are no way
// round a --deny-port.
func TestNetworkConsoleNeedsAllowPort(t *testing.T) {
	e := newEnv(t, envOptions{config: func(c *Config) {
		c.Policy.DenyPorts = []string{"/dev/ttyS*", "tcp://10.*"}
	}})
	for _, port := range []string{"tcp://127.0.0.1:1", "TCP://127.0.0.1:1", "rfc2217://localhost.:22", "tcp://127.0.0.1:022"} {
		if msg := e.callErr("serial_open", map[string]any{"port": port}); !strings.Contains(msg, "is a network console") || !strings.Contains(msg, "--allow-port") {
			t.Errorf("serial_open %s: %s", port, msg)
		}
	}
	for _, port := range []string{"/dev/ttyS0", "../../../../../../../dev/ttyS0", "/dev/../dev/ttyS0", "TCP://10.0.0.1:2000", "tcp://10.0.0.1:02000"} {
		if msg := e.callErr("serial_open", map[string]any{"port": port}); !strings.Contains(msg, "--deny-port") {
			t.Errorf("serial_open %s gets past --deny-port: %s", port, msg)
		}
	}
}

// Millisecond arguments never wrap around into other values: a capture
// window past its bound is refused naming it, an expect's wait is cut to
// its bound.
func TestMillisecondArgumentsDoNotWrap(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	c := e.open(map[string]any{"port": e.board.SerialPath()})
	for _, arg := range []string{"duration_ms", "idle_timeout_ms", "initial_timeout_ms", "timeout_ms"} {
		msg := e.callErr("serial_read", map[string]any{"connection": c, arg: int64(18446744073710)})
		if !strings.Contains(msg, arg+" must be from 0 to") {
			t.Errorf("serial_read %s of 584 years: %s", arg, msg)
		}
	}
	if msg := e.callErr("console_release", map[string]any{"connection": c, "ttl_ms": int64(18446744073710)}); !strings.Contains(msg, "ttl_ms must be from 0 to") {
		t.Errorf("console_release ttl_ms of 584 years: %s", msg)
	}
	if got := lockWait(func() *int64 { v := int64(18446744073710); return &v }()); got != maxLockWait {
		t.Errorf("lock_timeout_ms of 584 years waits %v, want %v", got, maxLockWait)
	}
}

package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/devices"
	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

// TestBenchDeviceOneConversion: a bench device reaches its port the same
// way from serial_open by name and from a sequence: the modem lines and
// reconnection it declares apply on both paths, and a line it does not
// declare is left alone.
func TestBenchDeviceOneConversion(t *testing.T) {
	var mu sync.Mutex
	var seen []serialx.Config
	e := newEnv(t, envOptions{sim: true, config: func(c *Config) {
		dir := t.TempDir()
		file := filepath.Join(dir, "bench.yaml")
		body := "devices:\n  dut: {port: " + c.DefaultPort + ", dtr: false, reconnect: true}\n"
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		b, err := steps.LoadBench(files.Anywhere(), file)
		if err != nil {
			t.Fatal(err)
		}
		c.Bench = b
		c.OpenConsole = func(ctx context.Context, name string, cfg serialx.Config) (Console, error) {
			mu.Lock()
			seen = append(seen, cfg)
			mu.Unlock()
			cfg.DTR, cfg.RTS = nil, nil // a pty has no modem lines
			cfg.Devices = devices.Anywhere()
			return serialx.Open(ctx, name, cfg)
		}
	}})
	e.sequence(map[string]any{"steps": map[string]any{
		"devices": map[string]any{"dut": map[string]any{}},
		"steps":   []any{map[string]any{"send": "version", "to": "dut"}},
	}})
	res := callWith(t, context.Background(), e.c, "serial_open", map[string]any{"port": "dut"})
	if res.IsError {
		t.Fatalf("serial_open dut: %s", text(res))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 2 {
		t.Fatalf("opened %d times, want 2 (the sequence, then serial_open)", len(seen))
	}
	for i, cfg := range seen {
		if cfg.DTR == nil || *cfg.DTR || !cfg.Reconnect || cfg.RTS != nil {
			t.Errorf("open %d: dtr %v, rts %v, reconnect %v: want dtr false, rts left alone, reconnect on", i, cfg.DTR, cfg.RTS, cfg.Reconnect)
		}
	}
}

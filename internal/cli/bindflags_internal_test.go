package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/mcpserver"
	"github.com/hilrun/hilrun/pkg/steps"
)

func TestProbeFlag(t *testing.T) {
	tests := []struct {
		in, backend, flag, err string
	}{
		{in: "board=openocd://127.0.0.1:4444", backend: steps.BackendOpenOCD, flag: "board=127.0.0.1:4444"},
		{in: "q=gdb://127.0.0.1:1234", backend: steps.BackendGDB, flag: "q=127.0.0.1:1234"},
		{in: "app=gdb://127.0.0.1:2345?attach=running", backend: steps.BackendGDB, flag: "app=127.0.0.1:2345?attach=running"},
		{in: "bmp=gdb:///dev/ttyACM0", backend: steps.BackendGDB, flag: "bmp=/dev/ttyACM0"},
		{in: "s=gdb:///run/stub.sock", backend: steps.BackendGDB, flag: "s=/run/stub.sock"},
		{in: "board", err: "want NAME=URL"},
		{in: "=gdb://h:1", err: "want NAME=URL"},
		{in: "board=127.0.0.1:4444", err: "want openocd://HOST:PORT or gdb://ADDRESS after board="},
		{in: "board=serial:///dev/ttyUSB0", err: `unknown kind of probe "serial"`},
		{in: "board=qemu:fw.elf", err: "a QEMU board is started with --qemu FILE"},
		{in: "board=openocd://h:1?attach=running", err: "an openocd:// address takes no options"},
		{in: "app=gdb://127.0.0.1:2345?attach=sometimes", err: "attach"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			backend, flag, err := parseProbeFlag(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) || !strings.HasPrefix(err.Error(), "--probe "+tt.in+": ") {
					t.Errorf("got %q, %v; want an error naming the flag and saying %q", flag, err, tt.err)
				}
				return
			}
			if err != nil || backend != tt.backend || flag != tt.flag {
				t.Errorf("got %s %q %v, want %s %q", backend, flag, err, tt.backend, tt.flag)
			}
		})
	}
}

// --probe binds as the older flags do: its values join theirs, and a
// probe bound twice over MCP's bench is refused.
func TestProbeFlagsJoinTheOlderOnes(t *testing.T) {
	b := &BindFlags{OpenOCD: []string{"a=127.0.0.1:4444"}, GDB: []string{"b=127.0.0.1:1"}, Probes: []string{"c=openocd://127.0.0.1:6666", "d=gdb://127.0.0.1:2?attach=running"}}
	openocd, gdb, err := b.probeFlags()
	if err != nil || !slices.Equal(openocd, []string{"a=127.0.0.1:4444", "c=127.0.0.1:6666"}) || !slices.Equal(gdb, []string{"b=127.0.0.1:1", "d=127.0.0.1:2?attach=running"}) {
		t.Fatalf("got %q %q %v", openocd, gdb, err)
	}
	var cfg mcpserver.Config
	if err := bindProbes(&cfg, b); err != nil {
		t.Fatal(err)
	}
	if p := cfg.Bench.Probes["c"]; p == nil || p.OpenOCD != "127.0.0.1:6666" {
		t.Errorf("probe c: %+v", p)
	}
	if p := cfg.Bench.Probes["d"]; p == nil || p.GDB != "127.0.0.1:2" || p.GDBAttach != "running" {
		t.Errorf("probe d: %+v", p)
	}
	twice := &BindFlags{Probes: []string{"x=openocd://127.0.0.1:4444", "x=gdb://127.0.0.1:1"}}
	if err := bindProbes(&mcpserver.Config{}, twice); err == nil || !strings.Contains(err.Error(), "probe x is bound twice") {
		t.Errorf("a probe bound to both: %v", err)
	}
}

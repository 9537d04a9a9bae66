package gdbremote

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/openocd"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/sim/jtag"
	"github.com/hilrun/hilrun/pkg/testenv"

	"github.com/hilrun/hilrun/pkg/gate/dial"
	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/process"
)

// startOpenOCD starts the virtual board's memory behind its JTAG port and
// a real OpenOCD driving it, with its GDB server on gdbPort.
func startOpenOCD(t *testing.T, gdbPort string) (*sim.Memory, *openocd.Process) {
	t.Helper()
	bin := testenv.NeedTool(t, "openocd", "apt-get install openocd")
	mem := sim.NewMemory()
	srv, err := jtag.Serve(context.Background(), mem, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	dir := t.TempDir()
	cfg := filepath.Join(dir, "board.cfg")
	if err := os.WriteFile(cfg, []byte(jtag.OpenOCDConfig(srv.Addr())), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err := openocd.Launch(ctx, openocd.LaunchConfig{
		Procs:     process.Permit(environ.Host()),
		Dial:      dial.Anywhere(),
		Binary:    bin,
		Configs:   []string{cfg},
		Commands:  []string{jtag.TargetName + " configure -gdb-port " + gdbPort},
		StopGrace: 2 * time.Second,
		Env:       []string{"HOME=" + dir},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	return mem, p
}

func TestOpenOCD(t *testing.T) {
	gdbPort := freePort(t)
	mem, p := startOpenOCD(t, gdbPort)
	ctx := testCtx(t)

	t.Run("telnet port", func(t *testing.T) {
		addr := p.TelnetAddr()
		_, err := Dial(ctx, addr, gates(Options{HandshakeTimeout: 10 * time.Second}))
		want := addr + " is an OpenOCD telnet port, not a GDB remote stub: use openocd: " + addr
		if err == nil || !strings.HasSuffix(err.Error(), want) {
			t.Fatalf("Dial of OpenOCD's telnet port: %v, want it to end %q", err, want)
		}
	})

	t.Run("gdb server", func(t *testing.T) {
		// OpenOCD's own GDB server is another real stub.
		s, err := Dial(ctx, net.JoinHostPort("127.0.0.1", gdbPort), gates(Options{}))
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if err := mem.Write(sim.RAMBase+0x40, 32, 0x600dcafe); err != nil {
			t.Fatal(err)
		}
		v, err := s.ReadMemory(ctx, uint64(sim.RAMBase+0x40), 32, 1)
		if err != nil || v[0] != 0x600dcafe {
			t.Fatalf("read 0x%x, %v; want 0x600dcafe", v, err)
		}
		if err := s.WriteMemory(ctx, uint64(sim.RAMBase+0x80), 16, []uint64{0x2324, 0x7d2a}); err != nil {
			t.Fatal(err)
		}
		for i, want := range []uint32{0x2324, 0x7d2a} {
			got, err := mem.Read(sim.RAMBase+0x80+uint32(2*i), 16)
			if err != nil || got != want {
				t.Errorf("board holds 0x%x, %v at +%d; want 0x%x", got, err, 2*i, want)
			}
		}
		out, err := s.Command(ctx, "targets")
		if err != nil || !strings.Contains(out, "mem_ap") {
			t.Errorf("monitor targets: %q, %v", out, err)
		}
	})
}

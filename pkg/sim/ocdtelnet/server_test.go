package ocdtelnet_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/dial"
	"github.com/hilrun/hilrun/pkg/openocd"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/sim/ocdtelnet"
)

// TestClient drives the stand-in with hilrun's own OpenOCD client, as `run
// --sim` does on a machine without OpenOCD.
func TestClient(t *testing.T) {
	mem := sim.NewMemory()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	srv, err := ocdtelnet.Serve(ctx, mem, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	s, err := openocd.Dial(ctx, srv.Addr(), openocd.WithGate(dial.Anywhere()))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	if err := s.WriteMemory(ctx, uint64(sim.GPIOBSRR), 32, []uint64{1 << sim.LEDPin}); err != nil {
		t.Fatal(err)
	}
	if !mem.LED() {
		t.Error("the LED is off after a write to BSRR")
	}
	got, err := s.ReadMemory(ctx, uint64(sim.GPIOODR), 32, 1)
	if err != nil || got[0] != 1<<sim.LEDPin {
		t.Errorf("ODR = %v, %v", got, err)
	}
	if err := s.WriteMemory(ctx, 0x20000100, 16, []uint64{0xbeef, 0x1234}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.ReadMemory(ctx, 0x20000100, 8, 4); err != nil || len(got) != 4 || got[0] != 0xef || got[3] != 0x12 {
		t.Errorf("bytes = %x, %v", got, err)
	}
	if got, err := s.ReadMemory(ctx, 0x20000100, 64, 1); err != nil || got[0] != 0x1234beef {
		t.Errorf("64-bit = %x, %v", got, err)
	}

	_, err = s.ReadMemory(ctx, 0x30000000, 32, 1)
	var ce *openocd.CommandError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "Failed to read memory at 0x30000000") {
		t.Errorf("bus fault read = %v", err)
	}
	if err := s.WriteMemory(ctx, 0x30000000, 32, []uint64{1}); !errors.As(err, &ce) || !strings.Contains(err.Error(), "Failed to write memory at 0x30000000") {
		t.Errorf("bus fault write = %v", err)
	}
	if _, err := s.Command(ctx, "frobnicate"); !errors.As(err, &ce) || !strings.Contains(err.Error(), `invalid command name "frobnicate"`) {
		t.Errorf("unknown command = %v", err)
	}
	out, err := s.Command(ctx, "mdw 0x48000014 2")
	if err != nil || !strings.Contains(out, "0x48000014: 00000020 00000000") {
		t.Errorf("mdw = %q, %v", out, err)
	}
	if err := s.Reset(ctx, "halt"); err != nil {
		t.Errorf("reset halt: %v", err)
	}
	if mem.LED() {
		t.Error("reset left the LED on")
	}
}

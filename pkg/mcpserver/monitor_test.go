package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// gdbBench binds probe p to a GDB remote stub that is not there.
func gdbBench(c *Config) {
	c.Bench = &steps.Bench{Probes: map[string]*steps.Probe{"p": {Name: "p", GDB: "127.0.0.1:1"}}}
}

// A monitor step on OpenOCD is Tcl, checked as an openocd step: a typed
// command runs by default, anything else needs --allow-debug-tcl.
func TestMonitorOnOpenOCD(t *testing.T) {
	e := newEnv(t, envOptions{sim: true})
	out := e.sequence(map[string]any{"steps": []any{map[string]any{"monitor": "version", "expect": "Open On-Chip Debugger"}}})
	if statuses(out) != "0:passed" {
		t.Errorf("monitor: version: %s %+v", statuses(out), out.Steps)
	}
	msg := e.callErr("serial_sequence", map[string]any{"steps": []any{map[string]any{"monitor": "exec id"}}})
	if !strings.Contains(msg, "--allow-debug-tcl") {
		t.Errorf("monitor: exec id: %s", msg)
	}
}

// A monitor step on a GDB probe is a raw command the policy cannot read:
// it needs --allow-debug-tcl, and a read-only server refuses it. An
// openocd step on a GDB probe is refused before anything opens.
func TestMonitorOnGDB(t *testing.T) {
	step := map[string]any{"steps": []any{map[string]any{"monitor": "info registers", "probe": "p"}}}
	t.Run("default", func(t *testing.T) {
		e := newEnv(t, envOptions{config: gdbBench})
		if msg := e.callErr("serial_sequence", step); !strings.Contains(msg, "raw debugger commands") || !strings.Contains(msg, "--allow-debug-tcl") {
			t.Errorf("monitor on gdb: %s", msg)
		}
	})
	t.Run("read-only", func(t *testing.T) {
		e := newEnv(t, envOptions{config: func(c *Config) { gdbBench(c); c.Policy.AllowDebugTcl, c.Policy.ReadOnly = true, true }})
		if msg := e.callErr("serial_sequence", step); !strings.Contains(msg, "read-only") {
			t.Errorf("monitor on gdb, read-only: %s", msg)
		}
	})
	t.Run("allow-debug-tcl", func(t *testing.T) {
		e := newEnv(t, envOptions{config: func(c *Config) { gdbBench(c); c.Policy.AllowDebugTcl = true }})
		// Allowed: it goes to the probe, which cannot be reached.
		out := e.sequence(step)
		if out.Status == "passed" || strings.Contains(out.Error, "policy") || !strings.Contains(out.Error, "probe p") {
			t.Errorf("monitor on gdb with --allow-debug-tcl: %s %q", out.Status, out.Error)
		}
		msg := e.callErr("serial_sequence", map[string]any{"steps": []any{map[string]any{"openocd": "targets", "probe": "p"}}})
		if !strings.Contains(msg, "an openocd step sends OpenOCD Tcl, and probe p is a gdb probe") {
			t.Errorf("openocd on gdb: %s", msg)
		}
	})
}

// brokenStub is a probe session whose stub went away: every call says the
// bench broke, as a GDB stub's session does after a lost connection.
type brokenStub struct{}

type benchErr struct{}

func (benchErr) Error() string    { return "gdb 127.0.0.1:1: the session broke earlier" }
func (benchErr) BenchFault() bool { return true }

func (brokenStub) ReadMemory(context.Context, uint64, int, int) ([]uint64, error) {
	return nil, benchErr{}
}
func (brokenStub) WriteMemory(context.Context, uint64, int, []uint64) error { return benchErr{} }
func (brokenStub) Halt(context.Context) error                               { return benchErr{} }
func (brokenStub) Resume(context.Context) error                             { return benchErr{} }
func (brokenStub) Reset(context.Context, string) error                      { return benchErr{} }
func (brokenStub) Close() error                                             { return nil }

// A pooled session that broke inside a sequence, whatever its backend, is
// dropped: the next sequence opens a new one instead of failing on the
// broken one for ever.
func TestBrokenSessionReopened(t *testing.T) {
	var opened atomic.Int32
	e := newEnv(t, envOptions{config: func(c *Config) {
		gdbBench(c)
		c.OpenProbe = func(context.Context, *steps.Probe) (runner.Debugger, error) {
			opened.Add(1)
			return brokenStub{}, nil
		}
	}})
	step := map[string]any{"steps": []any{map[string]any{"mem_read": "0x20000000", "probe": "p"}}}
	for i := 1; i <= 2; i++ {
		out := e.sequence(step)
		if out.Status == "passed" || !strings.Contains(out.Error+fmt.Sprint(out.Steps), "broke") {
			t.Errorf("sequence %d on a broken stub: %s %q %+v", i, out.Status, out.Error, out.Steps)
		}
		if n := opened.Load(); n != int32(i) {
			t.Errorf("after sequence %d the probe was opened %d times, want %d", i, n, i)
		}
	}
}

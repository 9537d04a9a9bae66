package engine

import (
	"context"

	"github.com/hilrun/hilrun/pkg/gate"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

// MCPWire is the MCP server's wiring (mcpserver.Config.Wire), made with
// the server's gates once its configuration is complete: the bench its
// clients' sequences run on, how it opens the probe sessions it keeps
// across calls, and the one conversion of a device into a serial
// configuration; every effect of the server passes the same gates.
func MCPWire(gates gate.Policy) (runner.Bench, func(ctx context.Context, p *steps.Probe, dir string) (runner.Debugger, error), func(*steps.Device) serialx.Config) {
	bench := NewBench(BenchConfig{Gates: gates, ForClients: true, Launched: true})
	serial := func(d *steps.Device) serialx.Config { return SerialConfig(d, gates) }
	return bench, ProbeDialer(gates), serial
}

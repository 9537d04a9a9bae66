package engine

import (
	"context"

	"github.com/hilrun/hilrun/pkg/gdbremote"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// openGDB opens one persistent GDB remote session to the stub at the
// probe's address: HOST:PORT, or a serial device such as a Black Magic
// Probe's. A running target is left running (gdbremote.AttachAuto).
func openGDB(ctx context.Context, p *steps.Probe, _ ProbeOptions) (runner.Debugger, error) {
	s, err := gdbremote.Dial(ctx, p.GDB, gdbremote.Options{})
	if err != nil {
		return nil, err
	}
	return s, nil
}

package engine

import (
	"github.com/hilrun/hilrun/pkg/openocd"
	"github.com/hilrun/hilrun/pkg/runner"
)

// ParseCommand reads an OpenOCD command as a typed one (openocd.ParseTyped):
// the command grammar of the bench's Tcl backends, for the MCP server's
// policy, which would otherwise have to know OpenOCD.
func ParseCommand(cmd string) (runner.TypedCommand, error) {
	t, err := openocd.ParseTyped(cmd)
	if err != nil {
		return nil, err
	}
	return typedCommand{t}, nil
}

// typedCommand is an openocd.Typed as the runner names its effects.
type typedCommand struct{ openocd.Typed }

func (t typedCommand) Effect() runner.CommandEffect {
	switch t.Typed.Effect() {
	case openocd.EffectRead:
		return runner.CommandRead
	case openocd.EffectControl:
		return runner.CommandControl
	case openocd.EffectWrite:
		return runner.CommandWrite
	}
	return runner.CommandInfo
}

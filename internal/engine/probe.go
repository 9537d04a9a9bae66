package engine

import (
	"github.com/hilrun/hilrun/pkg/openocd"
	"github.com/hilrun/hilrun/pkg/steps"
)

// LaunchConfig is how to start OpenOCD for p, or nil when p attaches to a
// running one.
func LaunchConfig(p *steps.Probe) *openocd.LaunchConfig {
	if p.OpenOCD != "" || p.Launch == nil {
		return nil
	}
	return &openocd.LaunchConfig{
		Binary:        p.Launch.Binary,
		Configs:       p.Launch.Config,
		Commands:      p.Launch.Commands,
		AdapterSerial: p.Launch.AdapterSerial,
		Args:          p.Launch.Args,
	}
}

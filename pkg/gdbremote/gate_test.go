package gdbremote

import (
	"github.com/hilrun/hilrun/pkg/gate/devices"
	"github.com/hilrun/hilrun/pkg/gate/dial"
)

// gates is o reaching stubs as the command line does: any address, any
// serial port.
func gates(o Options) Options {
	o.Dial, o.Devices = dial.Anywhere(), devices.Anywhere()
	return o
}

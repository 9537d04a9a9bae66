package serialx

import (
	"github.com/hilrun/hilrun/pkg/gate/devices"
	"github.com/hilrun/hilrun/pkg/gate/dial"
)

// anyDevice and anyAddr open ports as the command line does: any device,
// any network console.
var (
	anyDevice = devices.Anywhere()
	anyAddr   = dial.Anywhere()
)

package pio

import (
	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/process"
)

// hostRunner runs programs as the command line does: any program, the
// user's environment.
var hostRunner = process.Runner{Policy: process.Permit(environ.Host())}

package engine

import (
	"github.com/hilrun/hilrun/pkg/gate"
	"github.com/hilrun/hilrun/pkg/gate/environ"
)

// hostGates are the command line's gates.
var hostGates = gate.Permissive(environ.Host())

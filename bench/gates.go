package bench

import (
	"github.com/hilrun/hilrun/pkg/gate"
	"github.com/hilrun/hilrun/pkg/gate/environ"
)

// Gates are the policies the benchmarks hand hilrun's packages: as on the
// command line, any program with the user's environment, any file,
// address and device.
var Gates = gate.Permissive(environ.Host())

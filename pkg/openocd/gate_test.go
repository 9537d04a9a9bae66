package openocd

import (
	"os"

	"github.com/hilrun/hilrun/pkg/gate/dial"
	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/process"
)

// hostProcs starts programs as the command line does: any program, the
// user's environment.
var hostProcs = process.Permit(environ.Host())

// osProcess is the launched OpenOCD, for tests that signal it.
func osProcess(p *Process) *os.Process {
	pr, err := os.FindProcess(p.child.Pid())
	if err != nil {
		panic(err)
	}
	return pr
}

// anyAddr lets a session dial any address, as the command line does.
var anyAddr = WithGate(dial.Anywhere())

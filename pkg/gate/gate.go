// Package gate holds the policies of hilrun's gates, one package each for
// every kind of effect: process (starting programs), files (opening files
// a sequence, bench, request or command line names), dial (connecting to
// an address), devices (opening serial ports and device files) and
// environ (reading environment variables). Nothing else in hilrun has
// these effects: TestGates walks the source and fails on any call outside
// them. A Policy is what the wiring (internal/engine) hands the adapters:
// Permissive for the user's own command line, the MCP server's own for
// what its clients ask.
package gate

import (
	"github.com/hilrun/hilrun/pkg/gate/devices"
	"github.com/hilrun/hilrun/pkg/gate/dial"
	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/gate/process"
)

// Policy is one policy for each gate. The zero Policy allows nothing and
// has an empty environment.
type Policy struct {
	// Env is what ${env.NAME} and env in expressions see.
	Env environ.Env
	// Procs starts programs; its Env is theirs.
	Procs   process.Policy
	Files   files.Policy
	Dial    dial.Policy
	Devices devices.Policy
}

// Permissive is the policy of the user's own command line: any program,
// file, address and device, and env as the environment of expressions
// and of every program (environ.Host for the user's own).
func Permissive(env environ.Env) Policy {
	return Policy{
		Env:     env,
		Procs:   process.Permit(env),
		Files:   files.Anywhere(),
		Dial:    dial.Anywhere(),
		Devices: devices.Anywhere(),
	}
}

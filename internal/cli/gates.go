package cli

import (
	"github.com/hilrun/hilrun/pkg/gate"
	"github.com/hilrun/hilrun/pkg/gate/environ"
)

// hostGates are the gates of the user's own command line (run, repl,
// validate, sim, pools): any program with the user's environment, any
// file, address and device; ${env.NAME} sees the user's environment. The
// MCP server has its own (mcpserver.Config.ServerGates).
func hostGates() gate.Policy { return gate.Permissive(environ.Host()) }

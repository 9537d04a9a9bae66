package mcpserver

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/hilrun/hilrun/pkg/steps"
)

// tool is one MCP tool, all in one place: its spec (its name, description
// and schemas), what it can do (for the policy and the capability
// matrix), and its handler.
type tool struct {
	spec mcp.Tool
	can  capability
	// handler makes the tool's handler on a server.
	handler func(*Server) server.ToolHandlerFunc
}

// toolGroups are the tools the server serves, in groups about one thing
// each, in the order the capability matrix lists them.
var toolGroups = [][]tool{sequenceTools, connectionTools, probeTools, buildTools, taskTools, pioTools}

// capability is what a tool can do, for the policy: everything it can do,
// and what every call of it needs whatever its arguments. What a call does
// beyond that (the steps of a sequence, an upload's form) is checked per
// step against the kind table. The zero capability is not described: a
// tool that has it is refused.
type capability struct {
	// caps is everything the tool can do.
	caps steps.Cap
	// every is what every call needs; the server refuses the call before
	// its handler runs when the policy does not allow it.
	every steps.Cap
	// perStep is set for tools whose calls run steps, each checked by its
	// kind.
	perStep   bool
	described bool
}

// does is the capability of a tool that can do caps, and whose calls need
// nothing in particular (does(0): a tool that touches nothing).
func does(caps steps.Cap) capability { return capability{caps: caps, described: true} }

// needs is the capability of a tool every call of which needs caps.
func needs(caps steps.Cap) capability { return does(caps).always(caps) }

// always says that every call needs c.
func (k capability) always(c steps.Cap) capability { k.every = c; return k }

// eachStep says that calls run steps, each checked by its kind.
func (k capability) eachStep() capability { k.perStep = true; return k }

// handle makes a tool's handler from fn, a method of Server over the
// tool's arguments A (see toolHandler).
func handle[A any](fn func(s *Server, ctx context.Context, req mcp.CallToolRequest, a *A) (any, string, error)) func(*Server) server.ToolHandlerFunc {
	return func(s *Server) server.ToolHandlerFunc {
		return toolHandler(s, func(ctx context.Context, req mcp.CallToolRequest, a *A) (any, string, error) {
			return fn(s, ctx, req, a)
		})
	}
}

// addTools serves the tools of every group.
func (s *Server) addTools() {
	for _, g := range toolGroups {
		for _, t := range g {
			s.addTool(t)
		}
	}
}

// addTool serves t behind the policy: a call of a tool whose capability is
// not described, or one that needs what the policy does not allow, is
// refused before its handler runs.
func (s *Server) addTool(t tool) {
	spec, h := withConsoleAlias(t.spec, t.handler(s))
	if ro := spec.Annotations.ReadOnlyHint; ro != nil && *ro {
		// mcp.NewTool starts every tool destructive; one that changes
		// nothing is not (clients ask before destructive calls).
		spec.Annotations.DestructiveHint = mcp.ToBoolPtr(false)
	}
	name, can := spec.Name, t.can
	s.mcp.AddTool(spec, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if !can.described {
			return mcp.NewToolResultError(refused("tool %s: what it can do is not described, so it is refused", name).Error()), nil
		}
		if err := s.cfg.Policy.Allow(name, can.every); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return h(ctx, req)
	})
}

// hints are the annotations of a tool that changes nothing (readOnly) or
// something, on this bench only (not the open world).
func hints(readOnly bool) []mcp.ToolOption {
	return []mcp.ToolOption{mcp.WithReadOnlyHintAnnotation(readOnly), mcp.WithOpenWorldHintAnnotation(false)}
}

func lockTimeout() mcp.ToolOption {
	return mcp.WithInteger("lock_timeout_ms", mcp.Min(0),
		mcp.Description("How long to wait, in milliseconds, when another call holds the port or probe; 0 (the default) fails at once with \"busy: held by ...\"."))
}

func connectionArg() mcp.ToolOption {
	return mcp.WithString("connection",
		mcp.Description("A connection id from serial_open (c1), its label, or its port path; may be left out when exactly one connection is open. connection_id is accepted too."))
}

func connectionIDArg() mcp.ToolOption {
	return mcp.WithString("connection_id", mcp.Description("Same as connection."))
}

// anyOf sets a property's schema to one of several.
func anyOf(schemas ...map[string]any) mcp.PropertyOption {
	return func(m map[string]any) {
		list := make([]any, len(schemas))
		for i, s := range schemas {
			list[i] = s
		}
		m["anyOf"] = list
	}
}

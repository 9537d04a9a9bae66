package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// requestIDKey is where the tools/call hook leaves the JSON-RPC request id
// for the handler, in the request's _meta.
const requestIDKey = "dev.hilrun/request_id"

// track runs a tool call under the server's life and counts it in flight,
// so Close can cancel it and wait for it, and the client's
// notifications/cancelled can end it (cancelArrived), even one that came
// before the call started.
func (s *Server) track(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return mcp.NewToolResultError("the server is shutting down"), nil
		}
		s.inflight.Add(1)
		s.mu.Unlock()
		defer s.inflight.Done()
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		call := s.calling(ctx, req, cancel)
		defer s.called(call)
		stop := context.AfterFunc(s.life, cancel)
		defer stop()
		var res *mcp.CallToolResult
		var err error
		if s.cancelledByClient(call) {
			res = mcp.NewToolResultError("cancelled by the client before it started")
		} else {
			beat := s.startBeat(cctx, req)
			res, err = next(withBeat(cctx, beat), req)
			// No heartbeat after the result.
			beat.stop()
		}
		if ctx.Err() != nil || s.cancelledByClient(call) {
			// The client cancelled the call (notifications/cancelled, or
			// it went away): it gets no response, as the specification
			// says. A call the server's shutdown ended still does.
			if o := outboxOf(ctx); o != nil && req.Params.Meta != nil {
				if id, ok := req.Params.Meta.AdditionalFields[requestIDKey]; ok && id != nil {
					o.drop(id)
				}
			}
		}
		return res, err
	}
}

// callKey names a call by its session and JSON-RPC id; "" when it has no
// id.
func callKey(ctx context.Context, req mcp.CallToolRequest) string {
	if req.Params.Meta == nil {
		return ""
	}
	id, ok := req.Params.Meta.AdditionalFields[requestIDKey]
	if !ok || id == nil {
		return ""
	}
	session := sessionOf(ctx)
	if session == "" {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			session = sess.SessionID()
		}
	}
	return cancelKey(session, id)
}

// who names the call behind ctx and req for "busy: held by ...": the tool,
// the JSON-RPC request id, and the client's name and session when known.
func who(ctx context.Context, req mcp.CallToolRequest) string {
	var parts []string
	if req.Params.Meta != nil {
		if id, ok := req.Params.Meta.AdditionalFields[requestIDKey]; ok && id != nil {
			parts = append(parts, fmt.Sprintf("request %v", id))
		}
	}
	if sess := server.ClientSessionFromContext(ctx); sess != nil {
		if ci, ok := sess.(server.SessionWithClientInfo); ok {
			if info := ci.GetClientInfo(); info.Name != "" {
				parts = append(parts, "client "+info.Name)
			}
		}
		if id := sess.SessionID(); id != "" {
			if len(id) > 12 {
				id = id[:12]
			}
			parts = append(parts, "session "+id)
		}
	}
	if len(parts) == 0 {
		return req.Params.Name
	}
	return req.Params.Name + " (" + strings.Join(parts, ", ") + ")"
}

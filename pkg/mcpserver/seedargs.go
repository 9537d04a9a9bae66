package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// The console tools of smon, an MCP server agents are already written
// against, have a home in hilrun under the same names and arguments:
// console_list and log_info (consoles.go), serial_send, serial_send_ctrl
// and serial_snapshot (serialsend.go), log_search (logsearch.go),
// console_release and console_hold (consolerelease.go). What makes the
// arguments of agents written for such servers fit is here: console is
// accepted wherever a tool takes connection, and numbers given as text.

// consoleArgName is the seed's name for the connection argument.
const consoleArgName = "console"

// withConsoleAlias makes a tool that takes connection take console too,
// with the same meaning: its schema gains the property, and a call's
// console argument is passed on as connection. A call that gives both,
// naming different connections, is refused.
func withConsoleAlias(t mcp.Tool, h server.ToolHandlerFunc) (mcp.Tool, server.ToolHandlerFunc) {
	props := t.InputSchema.Properties
	if _, ok := props["connection"]; !ok {
		return t, h
	}
	if _, ok := props[consoleArgName]; ok {
		return t, h
	}
	np := make(map[string]any, len(props)+1)
	for k, v := range props {
		np[k] = v
	}
	np[consoleArgName] = map[string]any{"type": "string", "description": "Same as connection (the name smon gives it): a connection id, label or port path."}
	t.InputSchema.Properties = np
	if t.InputSchema.PropertyOrder != nil {
		t.InputSchema.PropertyOrder = append(append([]string(nil), t.InputSchema.PropertyOrder...), consoleArgName)
	}
	return t, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if err := renameConsoleArg(&req); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return h(ctx, req)
	}
}

// renameConsoleArg passes a call's console argument on as connection.
func renameConsoleArg(req *mcp.CallToolRequest) error {
	var args map[string]json.RawMessage
	switch {
	case len(bytes.TrimSpace(req.Params.RawArguments)) > 0:
		if err := json.Unmarshal(req.Params.RawArguments, &args); err != nil {
			return nil // not an object: bind says what is wrong
		}
	case req.Params.Arguments != nil:
		b, err := json.Marshal(req.Params.Arguments)
		if err != nil || json.Unmarshal(b, &args) != nil {
			return nil
		}
	}
	con, ok := args[consoleArgName]
	if !ok {
		return nil
	}
	if other, ok := args["connection"]; ok && !bytes.Equal(bytes.TrimSpace(other), bytes.TrimSpace(con)) {
		return fmt.Errorf("arguments of %s: console and connection name different connections (%s, %s); give one", req.Params.Name, con, other)
	}
	delete(args, consoleArgName)
	args["connection"] = con
	raw, err := json.Marshal(args)
	if err != nil {
		return fmt.Errorf("arguments of %s: %w", req.Params.Name, err)
	}
	req.Params.RawArguments = raw
	if m, ok := req.Params.Arguments.(map[string]any); ok {
		nm := make(map[string]any, len(m))
		for k, v := range m {
			nm[k] = v
		}
		nm["connection"] = nm[consoleArgName]
		delete(nm, consoleArgName)
		req.Params.Arguments = nm
	}
	return nil
}

// digits is an integer argument that a client may also send as a string
// of digits: the Rust serial MCP server takes data_bits as "8".
type digits int

func (n *digits) UnmarshalJSON(b []byte) error {
	s := string(bytes.TrimSpace(b))
	if s == "null" {
		return nil
	}
	if uq, err := strconv.Unquote(s); err == nil {
		s = strings.TrimSpace(uq)
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("want a whole number or a string of digits, found %s", b)
	}
	*n = digits(v)
	return nil
}

package mcpserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/stream"
)

type sendArgs struct {
	Connection    string `json:"connection"`
	ConnectionID  string `json:"connection_id"`
	Text          string `json:"text"`
	Newline       *bool  `json:"newline"`
	LockTimeoutMS *int64 `json:"lock_timeout_ms"`
}

func (s *Server) serialSend(ctx context.Context, req mcp.CallToolRequest, a *sendArgs) (any, string, error) {
	nl := a.Newline == nil || *a.Newline
	if a.Text == "" && !nl {
		return nil, "", errors.New("nothing to send: text is empty and newline is false")
	}
	return s.serialWrite(ctx, req, &writeArgs{Connection: a.Connection, ConnectionID: a.ConnectionID, Data: a.Text, Newline: nl, LockTimeoutMS: a.LockTimeoutMS})
}

type sendCtrlArgs struct {
	Connection    string `json:"connection"`
	ConnectionID  string `json:"connection_id"`
	Ctrl          string `json:"ctrl"`
	LockTimeoutMS *int64 `json:"lock_timeout_ms"`
}

func (s *Server) serialSendCtrl(ctx context.Context, req mcp.CallToolRequest, a *sendCtrlArgs) (any, string, error) {
	if a.Ctrl == "" {
		return nil, "", errors.New("ctrl is required: one character, c for Ctrl-C")
	}
	return s.serialWrite(ctx, req, &writeArgs{Connection: a.Connection, ConnectionID: a.ConnectionID, Ctrl: a.Ctrl, LockTimeoutMS: a.LockTimeoutMS})
}

type snapshotArgs struct {
	Connection   string `json:"connection"`
	ConnectionID string `json:"connection_id"`
	Lines        *int   `json:"lines"`
}

type snapshotResult struct {
	ConnectionID string `json:"connection_id"`
	Text         string `json:"text"`
	Lines        int    `json:"lines"`
	Start        int64  `json:"start"`
	Cursor       int64  `json:"cursor"`
}

// Bounds of serial_snapshot.
const (
	defaultSnapshotLines = 40
	maxSnapshotLines     = 10000
	maxSnapshotBytes     = 64 << 10
)

func (s *Server) serialSnapshot(ctx context.Context, req mcp.CallToolRequest, a *snapshotArgs) (any, string, error) {
	n := defaultSnapshotLines
	if a.Lines != nil {
		n = *a.Lines
	}
	if n < 1 || n > maxSnapshotLines {
		return nil, "", fmt.Errorf("lines must be from 1 to %d, found %d", maxSnapshotLines, n)
	}
	c, err := s.connection(first(a.Connection, a.ConnectionID))
	if err != nil {
		return nil, "", err
	}
	// Tail and Cursor are two looks at a buffer that may grow between them:
	// take the cursor first, and cut what came after it.
	cur := c.console.Cursor()
	data, start, next := c.console.Read(max(cur-maxSnapshotBytes, 0), maxSnapshotBytes)
	if next > cur {
		data = data[:len(data)-int(next-cur)]
	}
	tail := stream.Tail(data, n, maxSnapshotBytes)
	start += int64(len(data) - len(tail))
	text, _ := encodeBytes(tail, "utf8")
	lines := bytes.Count(tail, []byte("\n"))
	if len(tail) > 0 && tail[len(tail)-1] != '\n' {
		lines++
	}
	out := snapshotResult{ConnectionID: c.id, Text: text, Lines: lines, Start: start, Cursor: cur}
	return out, text, nil
}

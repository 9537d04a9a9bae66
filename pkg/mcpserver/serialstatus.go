package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

type statusArgs struct {
	Connection   string `json:"connection"`
	ConnectionID string `json:"connection_id"`
}

type connStatus struct {
	ConnectionID string `json:"connection_id"`
	Label        string `json:"label,omitempty"`
	Port         string `json:"port"`
	Baud         int    `json:"baud"`
	LineEnding   string `json:"line_ending"`
	Connected    bool   `json:"connected"`
	Released     bool   `json:"released"`
	RxBytes      int64  `json:"rx_bytes"`
	TxBytes      int64  `json:"tx_bytes"`
	Cursor       int64  `json:"cursor"`
	ReadCursor   int64  `json:"read_cursor"`
	Error        string `json:"error,omitempty"`
	HeldBy       string `json:"held_by,omitempty"`
	OpenedAt     string `json:"opened_at"`
	Log          string `json:"log,omitempty"`
	Timeline     string `json:"timeline,omitempty"`
	LogResource  string `json:"log_resource"`
}

type statusResult struct {
	Connections []connStatus `json:"connections"`
}

func (s *Server) serialStatus(ctx context.Context, req mcp.CallToolRequest, a *statusArgs) (any, string, error) {
	var cs []*connection
	if ref := first(a.Connection, a.ConnectionID); ref != "" {
		c, err := s.connection(ref)
		if err != nil {
			return nil, "", err
		}
		cs = []*connection{c}
	} else {
		s.mu.Lock()
		cs = s.sortedConnsLocked()
		s.mu.Unlock()
	}
	out := statusResult{Connections: []connStatus{}}
	var lines []string
	for _, c := range cs {
		st := c.console.Stats()
		raw, tl := c.console.LogPaths()
		c.mu.Lock()
		rc := c.readCursor
		c.mu.Unlock()
		cst := connStatus{
			ConnectionID: c.id, Label: c.label, Port: c.port, Baud: c.cfg.Baud, LineEnding: c.lineEnding,
			Connected: st.Connected, Released: st.Released, RxBytes: st.RxBytes, TxBytes: st.TxBytes, Cursor: c.console.Cursor(),
			ReadCursor: rc, Error: st.Err, HeldBy: s.locks.holderOf(portKey(realPort(c.port))),
			OpenedAt: c.opened.UTC().Format(time.RFC3339Nano), Log: raw, Timeline: tl, LogResource: connLogURI(c.id),
		}
		out.Connections = append(out.Connections, cst)
		line := fmt.Sprintf("%s %s %d baud connected=%t rx=%d tx=%d cursor=%d", c.id, c.port, cst.Baud, cst.Connected, cst.RxBytes, cst.TxBytes, cst.Cursor)
		if c.label != "" {
			line = fmt.Sprintf("%s (%s)%s", c.id, c.label, strings.TrimPrefix(line, c.id))
		}
		if cst.HeldBy != "" {
			line += " held by " + cst.HeldBy
		}
		lines = append(lines, line)
	}
	if len(lines) == 0 {
		return out, "no connection is open", nil
	}
	return out, strings.Join(lines, "\n"), nil
}

package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/serialx"
)

type consoleListArgs struct{}

type gapInfo struct {
	From   string `json:"from"`
	Until  string `json:"until,omitempty"`
	Offset int64  `json:"offset"`
}

type consoleInfo struct {
	ConnectionID string `json:"connection_id"`
	Label        string `json:"label,omitempty"`
	Port         string `json:"port"`
	Baud         int    `json:"baud"`
	Connected    bool   `json:"connected"`
	Released     bool   `json:"released"`
	Cursor       int64  `json:"cursor"`
	ReadCursor   int64  `json:"read_cursor"`
	RxBytes      int64  `json:"rx_bytes"`
	TxBytes      int64  `json:"tx_bytes"`
	Log          string `json:"log,omitempty"`
	LogResource  string `json:"log_resource"`
	// The lease of the port, when someone holds one.
	LeaseOwner   string    `json:"lease_owner,omitempty"`
	LeaseState   string    `json:"lease_state,omitempty"`
	LeaseSince   string    `json:"lease_since,omitempty"`
	LeaseExpires string    `json:"lease_expires,omitempty"`
	Gaps         []gapInfo `json:"gaps"`
	Error        string    `json:"error,omitempty"`
}

type consoleListResult struct {
	Consoles []consoleInfo `json:"consoles"`
}

func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

// gapper is a console that records its hand-over gaps: *serialx.Console.
type gapper interface{ Gaps() []serialx.Gap }

func (s *Server) consoleInfo(c *connection) consoleInfo {
	st := c.console.Stats()
	raw, _ := c.console.LogPaths()
	c.mu.Lock()
	rc := c.readCursor
	c.mu.Unlock()
	ci := consoleInfo{
		ConnectionID: c.id, Label: c.label, Port: c.port, Baud: c.cfg.Baud, Connected: st.Connected, Released: st.Released,
		Cursor: c.console.Cursor(), ReadCursor: rc, RxBytes: st.RxBytes, TxBytes: st.TxBytes, Log: raw,
		LogResource: connLogURI(c.id), Gaps: []gapInfo{}, Error: st.Err,
	}
	if l, ok := s.leases.Get(leaseKey(c.port)); ok {
		ci.LeaseOwner, ci.LeaseState, ci.LeaseSince, ci.LeaseExpires = l.Owner, string(l.State), rfc3339(l.Since), rfc3339(l.Expires)
	}
	if g, ok := c.console.(gapper); ok {
		for _, gap := range g.Gaps() {
			ci.Gaps = append(ci.Gaps, gapInfo{From: rfc3339(gap.From), Until: rfc3339(gap.Until), Offset: gap.Offset})
		}
	}
	return ci
}

func (ci consoleInfo) line() string {
	name := ci.ConnectionID
	if ci.Label != "" {
		name += " (" + ci.Label + ")"
	}
	state := "connected"
	switch {
	case ci.Released:
		state = "released"
	case !ci.Connected:
		state = "disconnected"
	}
	line := fmt.Sprintf("%s %s %d baud %s cursor=%d", name, ci.Port, ci.Baud, state, ci.Cursor)
	if ci.LeaseOwner != "" {
		line += fmt.Sprintf(" lease: %s by %s", ci.LeaseState, shortOwner(ci.LeaseOwner))
	}
	if n := len(ci.Gaps); n > 0 {
		line += fmt.Sprintf(" gaps=%d", n)
	}
	return line
}

func (s *Server) consoleList(ctx context.Context, req mcp.CallToolRequest, a *consoleListArgs) (any, string, error) {
	s.mu.Lock()
	cs := s.sortedConnsLocked()
	s.mu.Unlock()
	out := consoleListResult{Consoles: []consoleInfo{}}
	var lines []string
	for _, c := range cs {
		ci := s.consoleInfo(c)
		out.Consoles = append(out.Consoles, ci)
		lines = append(lines, ci.line())
	}
	if len(lines) == 0 {
		return out, "no console is open: open one with serial_open", nil
	}
	return out, strings.Join(lines, "\n"), nil
}

type logInfoArgs struct {
	Connection   string `json:"connection"`
	ConnectionID string `json:"connection_id"`
}

type logInfoResult struct {
	ConnectionID string    `json:"connection_id"`
	Path         string    `json:"path"`
	Timeline     string    `json:"timeline"`
	Started      string    `json:"started"`
	Bytes        int64     `json:"bytes"`
	LogResource  string    `json:"log_resource"`
	Gaps         []gapInfo `json:"gaps"`
}

func (s *Server) logInfo(ctx context.Context, req mcp.CallToolRequest, a *logInfoArgs) (any, string, error) {
	c, err := s.connection(first(a.Connection, a.ConnectionID))
	if err != nil {
		return nil, "", err
	}
	raw, tl := c.console.LogPaths()
	ci := s.consoleInfo(c)
	out := logInfoResult{ConnectionID: c.id, Path: raw, Timeline: tl, Started: rfc3339(c.opened), Bytes: ci.RxBytes, LogResource: connLogURI(c.id), Gaps: ci.Gaps}
	text := fmt.Sprintf("%s: log %s (started %s, %d bytes), timeline %s, resource %s", c.id, raw, out.Started, out.Bytes, tl, out.LogResource)
	for _, g := range ci.Gaps {
		until := g.Until
		if until == "" {
			until = "now (still released)"
		}
		text += fmt.Sprintf("\ngap at offset %d: released %s until %s; what the device sent then is not in the log", g.Offset, g.From, until)
	}
	return out, text, nil
}

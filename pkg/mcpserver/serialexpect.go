package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

type expectArgs struct {
	Connection    string `json:"connection"`
	ConnectionID  string `json:"connection_id"`
	Pattern       string `json:"pattern"`
	Regex         bool   `json:"regex"`
	TimeoutMS     int64  `json:"timeout_ms"`
	SettleMS      *int64 `json:"settle_ms"`
	Cursor        *int64 `json:"cursor"`
	Encoding      string `json:"encoding"`
	LockTimeoutMS *int64 `json:"lock_timeout_ms"`
}

// maxSettleMS bounds serial_expect's settle_ms, as steps.MaxSettle bounds
// a sequence's settle.
const maxSettleMS = int64(steps.MaxSettle / time.Millisecond)

type expectResult struct {
	ConnectionID string            `json:"connection_id"`
	Matched      bool              `json:"matched"`
	TimedOut     bool              `json:"timed_out"`
	Data         string            `json:"data"`
	Cursor       int64             `json:"cursor"`
	Match        string            `json:"match"`
	Groups       []string          `json:"groups"`
	Named        map[string]string `json:"named,omitempty"`
}

// maxExpectWait bounds one serial_expect; longer waits call again.
const maxExpectWait = 120 * time.Second

func (s *Server) serialExpect(ctx context.Context, req mcp.CallToolRequest, a *expectArgs) (any, string, error) {
	c, err := s.connection(first(a.Connection, a.ConnectionID))
	if err != nil {
		return nil, "", err
	}
	if a.Pattern == "" {
		return nil, "", errors.New("pattern is required and must not be empty")
	}
	pat := stream.Literal(a.Pattern)
	if a.Regex {
		if pat, err = stream.Regexp(a.Pattern); err != nil {
			return nil, "", fmt.Errorf("pattern: %w", err)
		}
	}
	enc := a.Encoding
	if _, err := encodeBytes(nil, enc); err != nil {
		return nil, "", err
	}
	settle := stream.DefaultSettle
	if a.SettleMS != nil {
		if *a.SettleMS < 0 || *a.SettleMS > maxSettleMS {
			return nil, "", fmt.Errorf("settle_ms must be from 0 to %d, found %d", maxSettleMS, *a.SettleMS)
		}
		settle = time.Duration(*a.SettleMS) * time.Millisecond
	}
	// A longer wait is cut to maxExpectWait (the client calls again), in
	// milliseconds first so that no value wraps around.
	wait := steps.DefaultExpectTimeout
	if a.TimeoutMS > 0 {
		wait = time.Duration(min(a.TimeoutMS, int64(maxExpectWait/time.Millisecond))) * time.Millisecond
	}
	release, err := s.locks.acquire(ctx, []string{portKey(realPort(c.port))}, who(ctx, req), lockWait(a.LockTimeoutMS))
	if err != nil {
		return nil, "", err
	}
	defer release()
	from := c.console.Cursor()
	if a.Cursor != nil {
		from = *a.Cursor
	}
	ectx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	m, err := c.console.Expect(stream.WithSettle(ectx, settle), from, []stream.Pattern{pat}, nil)
	if err != nil {
		if ctx.Err() != nil || ectx.Err() == nil {
			return nil, "", fmt.Errorf("expect on %s: %w", c.port, err)
		}
		data, _, _ := c.console.Read(from, defaultMaxRead)
		text, _ := encodeBytes(data, enc)
		out := expectResult{ConnectionID: c.id, TimedOut: true, Data: text, Cursor: from, Groups: []string{}}
		return out, fmt.Sprintf("no %s within %s on %s; received since cursor %d: %s", pat, wait, c.id, from, printable(data)), nil
	}
	text, _ := encodeBytes(m.Data, enc)
	out := expectResult{ConnectionID: c.id, Matched: true, Data: text, Cursor: m.End, Groups: []string{}}
	if len(m.Groups) > 0 {
		out.Match = m.Groups[0]
		out.Groups = append(out.Groups, m.Groups[1:]...)
	}
	for i, n := range m.Names {
		if n != "" && i < len(m.Groups) {
			if out.Named == nil {
				out.Named = map[string]string{}
			}
			out.Named[n] = m.Groups[i]
		}
	}
	c.mu.Lock()
	if m.End > c.readCursor {
		c.readCursor = m.End
	}
	c.mu.Unlock()
	return out, fmt.Sprintf("matched %q on %s; cursor %d; received: %s", out.Match, c.id, m.End, printable(m.Data)), nil
}

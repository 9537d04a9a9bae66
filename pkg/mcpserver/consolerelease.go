package mcpserver

import (
	"context"
	"errors"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/serialx"
)

type releaseArgs struct {
	Connection    string `json:"connection"`
	ConnectionID  string `json:"connection_id"`
	TTLMS         int64  `json:"ttl_ms"`
	LockTimeoutMS *int64 `json:"lock_timeout_ms"`
}

type holdArgs struct {
	Connection    string `json:"connection"`
	ConnectionID  string `json:"connection_id"`
	TimeoutMS     int64  `json:"timeout_ms"`
	LockTimeoutMS *int64 `json:"lock_timeout_ms"`
}

// handOverConsole is what console_release and console_hold share: the
// connection, its console as a serialx.HandOver, the caller's owner key,
// and the port held against other calls until release is called.
func (s *Server) handOverConsole(ctx context.Context, req mcp.CallToolRequest, ref string, lockTimeoutMS *int64) (*connection, serialx.HandOver, string, func(), error) {
	c, err := s.connection(ref)
	if err != nil {
		return nil, nil, "", nil, err
	}
	ho, ok := c.console.(serialx.HandOver)
	if !ok {
		return nil, nil, "", nil, fmt.Errorf("connection %s cannot let go of its port", c.id)
	}
	owner := sessionOwner(ctx)
	if owner == "" {
		return nil, nil, "", nil, errors.New("this call has no MCP session to hold the lease")
	}
	c.mu.Lock()
	opener := c.owner
	c.mu.Unlock()
	if opener != "" && opener != owner {
		return nil, nil, "", nil, fmt.Errorf("connection %s belongs to session %s, which opened it: only that session may release or hold its console (until it ends)", c.id, shortOwner(opener))
	}
	release, err := s.locks.acquire(ctx, []string{portKey(realPort(c.port))}, who(ctx, req), lockWait(lockTimeoutMS))
	if err != nil {
		return nil, nil, "", nil, err
	}
	return c, ho, owner, release, nil
}

func (s *Server) consoleRelease(ctx context.Context, req mcp.CallToolRequest, a *releaseArgs) (any, string, error) {
	ttl, err := msArg("ttl_ms", a.TTLMS, maxLockTTL)
	if err != nil {
		return nil, "", err
	}
	c, ho, owner, release, err := s.handOverConsole(ctx, req, first(a.Connection, a.ConnectionID), a.LockTimeoutMS)
	if err != nil {
		return nil, "", err
	}
	defer release()
	l, err := s.leases.ReleaseConsole(ctx, ho, owner, serialx.LeaseOptions{TTL: ttl, Note: "console_release"})
	if err != nil {
		return nil, "", fmt.Errorf("release %s: %w", c.port, err)
	}
	s.logf("session %s released %s (%s) for another program", shortOwner(owner), c.id, c.port)
	ci := s.consoleInfo(c)
	text := fmt.Sprintf("released %s (%s): the port is closed and unlocked, so another program can open it; output is not read until console_hold takes it back (cursor %d)", c.id, c.port, ci.Cursor)
	if !l.Expires.IsZero() {
		text += "; the right to take it back lapses at " + rfc3339(l.Expires)
	}
	return ci, text, nil
}

func (s *Server) consoleHold(ctx context.Context, req mcp.CallToolRequest, a *holdArgs) (any, string, error) {
	wait, err := msArg("timeout_ms", a.TimeoutMS, maxLockWait)
	if err != nil {
		return nil, "", err
	}
	c, ho, owner, release, err := s.handOverConsole(ctx, req, first(a.Connection, a.ConnectionID), a.LockTimeoutMS)
	if err != nil {
		return nil, "", err
	}
	defer release()
	// Taken back, the lease is as before console_release: a port this
	// session held with acquire_lock stays held, else the console is
	// shared again.
	if _, _, err := s.leases.TakeBackConsole(ctx, ho, owner, serialx.ReacquireOptions{Timeout: wait}); err != nil {
		return nil, "", fmt.Errorf("take back %s: %w", c.port, err)
	}
	ci := s.consoleInfo(c)
	text := fmt.Sprintf("holding %s (%s) again; reading goes on at cursor %d", c.id, c.port, ci.Cursor)
	if n := len(ci.Gaps); n > 0 {
		g := ci.Gaps[n-1]
		text += fmt.Sprintf("; released from %s to %s: what the device sent then was not read", g.From, g.Until)
	}
	return ci, text, nil
}

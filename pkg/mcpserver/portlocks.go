package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

type stopMonitorArgs struct {
	Port          string `json:"port"`
	Connection    string `json:"connection"`
	LockTimeoutMS *int64 `json:"lock_timeout_ms"`
}

func (s *Server) stopMonitor(ctx context.Context, req mcp.CallToolRequest, a *stopMonitorArgs) (any, string, error) {
	return s.serialClose(ctx, req, &closeArgs{Connection: first(a.Connection, a.Port), LockTimeoutMS: a.LockTimeoutMS})
}

type lockArgs struct {
	Port   string `json:"port"`
	Reason string `json:"reason"`
}

type acquireLockArgs struct {
	Port   string `json:"port"`
	Reason string `json:"reason"`
	TTLMS  *int64 `json:"ttl_ms"`
}

type lockResult struct {
	Port   string `json:"port"`
	Held   bool   `json:"held"`
	Owner  string `json:"owner"`
	Reason string `json:"reason,omitempty"`
	// Expires is when the lock lapses unless acquire_lock renews it.
	Expires string `json:"expires,omitempty"`
}

// defaultLockTTL is how long acquire_lock holds a port without ttl_ms, and
// maxLockTTL the most ttl_ms may ask: a client that vanishes does not keep
// a port for ever.
const (
	defaultLockTTL = 10 * time.Minute
	maxLockTTL     = 24 * time.Hour
)

// lockPort is the port path behind a connection id, label or path.
func (s *Server) lockPort(ref string) (string, error) {
	if ref == "" {
		return "", errors.New("port is required: a port path, or a connection id or label")
	}
	s.mu.Lock()
	c := s.findConnLocked(ref)
	s.mu.Unlock()
	if c != nil {
		return c.port, nil
	}
	if !steps.IsPortPath(ref) {
		return "", fmt.Errorf("port %q: no open connection has this id or label, and it is not a port path", ref)
	}
	if err := s.checkPort(ref); err != nil {
		return "", err
	}
	return ref, nil
}

func (s *Server) acquireLock(ctx context.Context, _ mcp.CallToolRequest, a *acquireLockArgs) (any, string, error) {
	port, err := s.lockPort(a.Port)
	if err != nil {
		return nil, "", err
	}
	ttl := defaultLockTTL
	if a.TTLMS != nil {
		if *a.TTLMS <= 0 || *a.TTLMS > maxLockTTL.Milliseconds() {
			return nil, "", fmt.Errorf("ttl_ms must be from 1 to %d (24 hours), found %d", maxLockTTL.Milliseconds(), *a.TTLMS)
		}
		ttl = time.Duration(*a.TTLMS) * time.Millisecond
	}
	owner := sessionOwner(ctx)
	if owner == "" {
		return nil, "", errors.New("this call has no MCP session to hold the lock")
	}
	l, err := s.leases.Lock(ctx, serialx.LeaseKey(port), owner, serialx.LeaseOptions{TTL: ttl, Note: first(a.Reason, "acquire_lock")})
	if err != nil {
		return nil, "", err
	}
	return lockResult{Port: port, Held: true, Owner: l.Owner, Reason: a.Reason, Expires: rfc3339(l.Expires)},
		fmt.Sprintf("%s is held by this session until %s (call acquire_lock again to renew), release_lock, or the end of the session", port, rfc3339(l.Expires)), nil
}

func (s *Server) releaseLock(ctx context.Context, _ mcp.CallToolRequest, a *lockArgs) (any, string, error) {
	port, err := s.lockPort(a.Port)
	if err != nil {
		return nil, "", err
	}
	owner := sessionOwner(ctx)
	if !s.leases.Unlock(serialx.LeaseKey(port), owner) {
		return lockResult{Port: port, Owner: owner}, port + " was not held by this session", nil
	}
	return lockResult{Port: port, Owner: owner}, port + " released", nil
}

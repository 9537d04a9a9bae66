package mcpserver

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/serialx"
)

type closeArgs struct {
	Connection    string `json:"connection"`
	ConnectionID  string `json:"connection_id"`
	LockTimeoutMS *int64 `json:"lock_timeout_ms"`
}

type closeResult struct {
	ConnectionID string `json:"connection_id"`
	Port         string `json:"port"`
	Closed       bool   `json:"closed"`
	LogResource  string `json:"log_resource"`
}

func (s *Server) serialClose(ctx context.Context, req mcp.CallToolRequest, a *closeArgs) (any, string, error) {
	c, err := s.connection(first(a.Connection, a.ConnectionID))
	if err != nil {
		return nil, "", err
	}
	release, err := s.locks.acquire(ctx, []string{portKey(realPort(c.port))}, who(ctx, req), lockWait(a.LockTimeoutMS))
	if err != nil {
		return nil, "", err
	}
	defer release()
	key := leaseKey(c.port)
	owner := sessionOwner(ctx)
	if l, ok := s.leases.Get(key); ok && l.Owner != owner && l.State == serialx.LeaseReleased {
		return nil, "", fmt.Errorf("close %s: %w", c.id, &serialx.LeaseError{Lease: l})
	}
	s.mu.Lock()
	if s.conns[c.id] != c {
		// Another call closed it while this one waited for the port.
		s.mu.Unlock()
		return nil, "", fmt.Errorf("connection %s is already closed", c.id)
	}
	delete(s.conns, c.id)
	s.mu.Unlock()
	s.leases.Drop(key, owner)
	err = c.console.Close()
	s.forgetClosed(c.id)
	s.logf("closed connection %s (%s)", c.id, c.port)
	out := closeResult{ConnectionID: c.id, Port: c.port, Closed: true, LogResource: connLogURI(c.id)}
	if err != nil {
		return out, fmt.Sprintf("closed connection %s (%s): %v", c.id, c.port, err), nil
	}
	return out, fmt.Sprintf("closed connection %s (%s); its log stays readable at %s while it is among the logs of the last %d connections closed", c.id, c.port, out.LogResource, s.keepClosed), nil
}

// maxClosedLogs is how many closed connections keep their logs: a server
// left running for weeks while agents open and close connections must not
// fill the lab machine's disk with them.
const maxClosedLogs = 50

// forgetClosed records that connection id closed, and deletes the logs
// (files and resource) of the closed connections beyond the last
// keepClosed.
func (s *Server) forgetClosed(id string) {
	s.mu.Lock()
	s.closedConns = append(s.closedConns, id)
	var gone []string
	if over := len(s.closedConns) - s.keepClosed; over > 0 {
		gone = slices.Clone(s.closedConns[:over])
		s.closedConns = slices.Delete(s.closedConns, 0, over)
	}
	s.mu.Unlock()
	for _, old := range gone {
		s.mcp.DeleteResources(connLogURI(old))
		if err := os.RemoveAll(filepath.Join(s.logDir, "connections", old)); err != nil {
			s.logf("remove the log of closed connection %s: %v", old, err)
		}
	}
}

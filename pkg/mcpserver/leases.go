package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/server"

	"github.com/hilrun/hilrun/pkg/serialx"
)

// sessionOwner is the lease owner of the call behind ctx: its MCP session
// id, "" when the call has no session.
func sessionOwner(ctx context.Context) string {
	if sess := server.ClientSessionFromContext(ctx); sess != nil {
		return sess.SessionID()
	}
	return ""
}

// shortOwner is a session id as messages show it.
func shortOwner(id string) string {
	if len(id) > 20 {
		return id[:20] + "…"
	}
	return id
}

// leaseKey is the lease key of a port path.
func leaseKey(port string) string { return serialx.LeaseKey(port) }

// leaseBusy is the locker's check for a port another session holds by a
// lease (serialx.LeaseHeld): its calls on the port fail at once. A port
// released for another program is not checked here: its console refuses
// writes by itself, and reading what it received harms nobody.
func (s *Server) leaseBusy(ctx context.Context, key string) error {
	port, ok := strings.CutPrefix(key, "port ")
	if !ok {
		return nil
	}
	l, ok := s.leases.Get(port)
	if !ok || l.State != serialx.LeaseHeld || l.Owner == sessionOwner(ctx) {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrBusy, &serialx.LeaseError{Lease: l})
}

// sessionEnded ends the leases of an MCP session that has ended: a
// console it had released stays released (another program may still have
// the port), and any session may take it back with console_hold.
func (s *Server) sessionEnded(id string) {
	if id == "" {
		return
	}
	s.tasks.sessionEnded(id)
	s.mu.Lock()
	for _, c := range s.conns {
		c.mu.Lock()
		if c.owner == id {
			c.owner = ""
		}
		c.mu.Unlock()
	}
	s.mu.Unlock()
	if s.leases == nil {
		return
	}
	for _, l := range s.leases.DropOwner(id) {
		s.logf("session %s ended: its lease of %s (%s) is dropped", shortOwner(id), l.Key, l.State)
	}
}

// unregistered is mcp-go's end of a session. Streamable HTTP sessions are
// ended by the session table instead (on DELETE, or when forgotten): mcp-go
// also unregisters one when its GET stream closes, which a client may
// reopen.
func (s *Server) unregistered(_ context.Context, sess server.ClientSession) {
	if id := sess.SessionID(); !strings.HasPrefix(id, sessionIDPrefix) {
		s.sessionEnded(id)
	}
}

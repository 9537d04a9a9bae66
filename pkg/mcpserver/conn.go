package mcpserver

import (
	"encoding/base64"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

// connection is a console opened with serial_open; it stays open between
// calls until serial_close.
type connection struct {
	id, label  string
	port       string
	cfg        serialx.Config
	lineEnding string
	// prompt and echo are the device's, for the sequences that borrow
	// the connection (see steps.Device).
	prompt  *steps.PatternSpec
	echo    bool
	console Console
	opened  time.Time

	mu sync.Mutex
	// owner is the MCP session that opened the connection: only it may
	// hand its console over (console_release, console_hold) until it ends
	// (then "": any session may).
	owner      string
	readCursor int64 // where the next serial_read without a cursor starts
	// lastSend is where the reply to the last send of a sequence began,
	// so the next sequence's first send waits for the prompt after it.
	lastSend runner.SendMark
	sent     bool
}

func base64Std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// realPort is the one spelling of a port (serialx.LeaseKey: the absolute
// path its symbolic links lead to, or a URL's canonical form), so that two
// names of one device share a lock and a lease.
func realPort(p string) string { return serialx.LeaseKey(p) }

// checkPort applies the port globs; the server's own default port (the
// virtual board) is exempt, and a network console the server's --bench
// names needs no --allow-port.
func (s *Server) checkPort(p string) error {
	if p != "" && s.cfg.DefaultPort != "" && realPort(p) == realPort(s.cfg.DefaultPort) {
		return nil
	}
	if s.benchPort(p) {
		return s.cfg.Policy.CheckTrustedPort(p)
	}
	return s.cfg.Policy.CheckPort(p)
}

// benchPort reports whether a device of the server's --bench file has the
// port p.
func (s *Server) benchPort(p string) bool {
	if s.cfg.Bench == nil || p == "" {
		return false
	}
	for _, d := range s.cfg.Bench.Devices {
		if d.Port != "" && realPort(d.Port) == realPort(p) {
			return true
		}
	}
	return false
}

// connection finds an open connection by id, label or port path. An empty
// ref means the only open connection.
func (s *Server) connection(ref string) (*connection, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ref == "" {
		if len(s.conns) == 1 {
			for _, c := range s.conns {
				return c, nil
			}
		}
		if len(s.conns) == 0 {
			return nil, errors.New("no connection is open: open one with serial_open")
		}
		return nil, fmt.Errorf("several connections are open (%s): say which with connection", s.connListLocked())
	}
	if c := s.findConnLocked(ref); c != nil {
		return c, nil
	}
	return nil, fmt.Errorf("no connection %q; open connections: %s", ref, s.connListLocked())
}

func (s *Server) findConnLocked(ref string) *connection {
	if c, ok := s.conns[ref]; ok {
		return c
	}
	for _, c := range s.conns {
		if c.label == ref {
			return c
		}
	}
	if steps.IsPortPath(ref) {
		r := realPort(ref)
		for _, c := range s.conns {
			if c.port == ref || realPort(c.port) == r {
				return c
			}
		}
	}
	return nil
}

func (s *Server) connListLocked() string {
	if len(s.conns) == 0 {
		return "none"
	}
	var out []string
	for _, c := range s.sortedConnsLocked() {
		d := c.id + " " + c.port
		if c.label != "" {
			d = c.id + " (" + c.label + ") " + c.port
		}
		out = append(out, d)
	}
	return strings.Join(out, ", ")
}

func (s *Server) sortedConnsLocked() []*connection {
	var cs []*connection
	for _, c := range s.conns {
		cs = append(cs, c)
	}
	sort.Slice(cs, func(i, j int) bool {
		a, _ := strconv.Atoi(strings.TrimPrefix(cs[i].id, "c"))
		b, _ := strconv.Atoi(strings.TrimPrefix(cs[j].id, "c"))
		return a < b
	})
	return cs
}

func first(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// readFrom is where a read starts: the cursor given, else where the last
// serial_read on this connection ended (the start of the retained buffer
// on the first read).
func (c *connection) readFrom(cursor *int64) int64 {
	if cursor != nil {
		return *cursor
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readCursor
}

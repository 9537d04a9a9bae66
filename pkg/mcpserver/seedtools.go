package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/stream"
)

// The tools of this file give the console tools of smon, an MCP server
// agents are already written against, a home in hilrun under the same
// names and arguments: console_list, serial_send, serial_send_ctrl,
// serial_snapshot, log_info, log_search, console_release and console_hold;
// and console is accepted wherever a tool takes connection.

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

// --- console_list ---

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

// --- serial_send, serial_send_ctrl ---

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

// --- serial_snapshot ---

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

// --- log_info ---

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

// --- console_release, console_hold ---

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

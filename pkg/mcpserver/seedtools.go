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

// addSeedTools serves the smon console tools.
func (s *Server) addSeedTools() {
	s.leases = serialx.NewLeases()
	s.locks.check = s.leaseBusy

	s.addTool(mcp.NewTool("console_list",
		mcp.WithTitleAnnotation("List consoles"),
		mcp.WithDescription("List every open console (connection): id, label, port, baud, connected, released (let go of for another program), cursor, read_cursor, the log, who holds a lease of its port, and the gaps while it was released."),
		outputSchema[consoleListResult](),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	), toolHandler(s, s.consoleList))

	s.addTool(mcp.NewTool("serial_send",
		mcp.WithTitleAnnotation("Send a line to a console"),
		mcp.WithDescription("Send text to a console, followed by its line ending (newline: true, the default), so a command is submitted; returns the cursor from just before the write: the reply begins there, so pass it to serial_expect. serial_write sends bytes exactly as given."),
		connectionArg(), connectionIDArg(),
		mcp.WithString("text", mcp.Description("What to send.")),
		mcp.WithBoolean("newline", mcp.DefaultBool(true), mcp.Description("Append the connection's line ending (serial_open's line_ending, lf by default); default true.")),
		lockTimeout(),
		outputSchema[writeResult](),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithOpenWorldHintAnnotation(false),
	), toolHandler(s, s.serialSend))

	s.addTool(mcp.NewTool("serial_send_ctrl",
		mcp.WithTitleAnnotation("Send a control key to a console"),
		mcp.WithDescription("Send one control key to a console: c for Ctrl-C, d for Ctrl-D, or ^], ctrl-z; returns the cursor from just before the write."),
		connectionArg(), connectionIDArg(),
		mcp.WithString("ctrl", mcp.Required(), mcp.Description("The key: one letter (c for Ctrl-C) or one of @ [ \\ ] ^ _, optionally written ^c or ctrl-c.")),
		lockTimeout(),
		outputSchema[writeResult](),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithOpenWorldHintAnnotation(false),
	), toolHandler(s, s.serialSendCtrl))

	s.addTool(mcp.NewTool("serial_snapshot",
		mcp.WithTitleAnnotation("Show the last lines of a console"),
		mcp.WithDescription("Return the last lines a console received, as text (at most 64 KiB), without moving serial_read's cursor: what a person would see on the screen. Returns text, lines, start (the cursor of its first byte) and cursor (the end of what was received)."),
		connectionArg(), connectionIDArg(),
		mcp.WithInteger("lines", mcp.Min(1), mcp.Max(maxSnapshotLines), mcp.DefaultNumber(defaultSnapshotLines), mcp.Description("How many lines; default 40.")),
		outputSchema[snapshotResult](),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	), toolHandler(s, s.serialSnapshot))

	s.addTool(mcp.NewTool("log_info",
		mcp.WithTitleAnnotation("Show a console's log"),
		mcp.WithDescription("Show where a console's log is: path (the exact bytes received since serial_open), timeline (one JSON line per chunk, write and event), started, bytes, the resource to read it by, and the gaps while the console was released for another program."),
		connectionArg(), connectionIDArg(),
		outputSchema[logInfoResult](),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	), toolHandler(s, s.logInfo))

	s.addTool(mcp.NewTool("log_search",
		mcp.WithTitleAnnotation("Search a console's log"),
		mcp.WithDescription(`Search a console's whole log on disk (everything received since serial_open, not only the buffer serial_read sees) for a pattern, line by line: a substring, or an RE2 regular expression with regex: true. Matches come newest first, each with its 1-based line, offset (the cursor of the line's first byte, for serial_read), the line as text, and context lines before and after. max_results keeps the newest matches and truncated says more existed; lines longer than 4 KiB are cut.`),
		connectionArg(), connectionIDArg(),
		mcp.WithString("pattern", mcp.Required(), mcp.Description("What to look for; not empty.")),
		mcp.WithBoolean("regex", mcp.Description("Read pattern as an RE2 regular expression; default false (substring).")),
		mcp.WithInteger("max_results", mcp.Min(1), mcp.Max(maxSearchResults), mcp.DefaultNumber(defaultSearchResults), mcp.Description("At most this many matches, the newest; default 100.")),
		mcp.WithInteger("context", mcp.Min(0), mcp.Max(maxSearchContext), mcp.Description("Lines of context before and after each match; default 0.")),
		mcp.WithInteger("days", mcp.Min(1), mcp.Description("Accepted for smon's callers: hilrun keeps one log per connection, searched whole.")),
		outputSchema[logSearchResult](),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	), toolHandler(s, s.logSearch))

	handOver := []mcp.ToolOption{
		connectionArg(), connectionIDArg(),
		lockTimeout(),
		outputSchema[consoleInfo](),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	}
	s.addTool(mcp.NewTool("console_release", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Let another program use a console's port"),
		mcp.WithDescription(`Let go of a console's port so another program (a flasher, picocom) can open it: returns once the port is really closed and its lock file removed. The console keeps its buffer, cursors and log; writes fail until console_hold takes the port back, and what the device sends meanwhile is not read (the log records the gap, with its times). Only the session that opened the connection may release it (or any session, once that one has ended). The release is this session's lease: only this session takes the port back, until it ends or ttl_ms passes; a port it held with acquire_lock is held again after console_hold; no session may serial_close the connection meanwhile.`),
		mcp.WithInteger("ttl_ms", mcp.Min(0), mcp.Description("The right to take the port back lapses after this many milliseconds; 0 (the default) keeps it until console_hold or the end of the session.")),
	}, handOver...)...), toolHandler(s, s.consoleRelease))

	s.addTool(mcp.NewTool("console_hold", append([]mcp.ToolOption{
		mcp.WithTitleAnnotation("Take a console's port back"),
		mcp.WithDescription(`Take back a port that console_release let go of, reopening it with the same settings; reading goes on at the same cursor. Waits up to timeout_ms (default 10000) while another program still has the port open or locked. Only the session that opened the connection may call it (any session, once that one has ended); refused while another session's lease holds the port. A port this session held with acquire_lock before console_release is held again. On a console that is not released it just returns its status.`),
		mcp.WithInteger("timeout_ms", mcp.Min(0), mcp.Description("How long to wait for the other program to let go of the port; default 10000.")),
	}, handOver...)...), toolHandler(s, s.consoleHold))
}

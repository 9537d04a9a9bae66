package mcpserver

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
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

// --- serial_open ---

var connIDRE = regexp.MustCompile(`^c[0-9]+$`)

type openArgs struct {
	Port          string `json:"port"`
	Baud          int    `json:"baud"`
	BaudRate      int    `json:"baud_rate"`
	LineEnding    string `json:"line_ending"`
	Label         string `json:"label"`
	DataBits      digits `json:"data_bits"` // 8 or "8"
	Parity        string `json:"parity"`
	StopBits      any    `json:"stop_bits"`
	FlowControl   string `json:"flow_control"`
	LockTimeoutMS *int64 `json:"lock_timeout_ms"`
	// Prompt is text, or {"regex": "..."}: the device's prompt, which
	// sequences on this connection wait for and stop at.
	Prompt any `json:"prompt"`
	// PromptRegex says a text prompt is an RE2 regular expression: the
	// portable spelling of {"regex": "..."}.
	PromptRegex bool  `json:"prompt_regex"`
	Echo        *bool `json:"echo"`
}

type openResult struct {
	ConnectionID string `json:"connection_id"`
	Label        string `json:"label,omitempty"`
	Port         string `json:"port"`
	Baud         int    `json:"baud"`
	LineEnding   string `json:"line_ending"`
	// Prompt is the prompt as given (a regexp between slashes); Echo says
	// the device echoes.
	Prompt      string `json:"prompt,omitempty"`
	Echo        bool   `json:"echo,omitempty"`
	Cursor      int64  `json:"cursor"`
	LogResource string `json:"log_resource"`
}

// benchDevice is the device of the server's bench file called name, or
// nil when name is a port path or no bench device has it.
func (s *Server) benchDevice(name string) *steps.Device {
	if s.cfg.Bench == nil || steps.IsPortPath(name) {
		return nil
	}
	return s.cfg.Bench.Devices[name]
}

// resolveUSB finds the port of a device given by USB identity, through the
// one conversion of a device into a serial configuration.
func (s *Server) resolveUSB(ctx context.Context, d *steps.Device) (string, error) {
	if s.cfg.SerialConfig == nil {
		return "", errors.New("this server finds no USB devices (it was started without serial settings)")
	}
	cfg := s.cfg.SerialConfig(d)
	if cfg.Resolve == nil {
		return "", errors.New("no USB identity to find it by")
	}
	return cfg.Resolve(ctx)
}

// openBenchDevice fills in a serial_open of a bench device by name: its
// port (found by USB identity when the bench says so) and the settings the
// call leaves out; the device's name labels the connection, so steps reach
// it with to: NAME.
func (s *Server) openBenchDevice(ctx context.Context, a *openArgs, d *steps.Device) error {
	port := d.Port
	if port == "" && d.USB != nil {
		p, err := s.resolveUSB(ctx, d)
		if err != nil {
			return fmt.Errorf("bench device %s: %w", d.Name, err)
		}
		port = p
	}
	if port == "" {
		return fmt.Errorf("bench device %s has no port in the bench file", d.Name)
	}
	a.Port = port
	if a.Baud == 0 && a.BaudRate == 0 {
		a.Baud = d.Baud
	}
	if a.DataBits == 0 {
		a.DataBits = digits(d.DataBits)
	}
	if a.Parity == "" {
		a.Parity = d.Parity
	}
	if a.StopBits == nil && d.StopBits != "" {
		a.StopBits = d.StopBits
	}
	if a.FlowControl == "" {
		a.FlowControl = d.FlowControl
	}
	if a.LineEnding == "" {
		a.LineEnding = d.LineEnding
	}
	if a.Label == "" {
		a.Label = d.Name
	}
	if a.Prompt == nil && d.Prompt != nil {
		a.Prompt = d.Prompt.Text.Raw
		if d.Prompt.Regex {
			a.Prompt = map[string]any{"regex": d.Prompt.Text.Raw}
		}
	}
	if a.Echo == nil && d.Echo {
		a.Echo = &d.Echo
	}
	return nil
}

// openPrompt reads serial_open's prompt: text, or {"regex": "RE2"}.
func openPrompt(v any) (*steps.PatternSpec, error) {
	regex := false
	if m, ok := v.(map[string]any); ok {
		r, ok := m["regex"].(string)
		if len(m) != 1 || !ok {
			return nil, errors.New(`prompt: give text, or {"regex": "RE2"}`)
		}
		v, regex = r, true
	}
	text, ok := v.(string)
	if !ok || text == "" {
		return nil, errors.New(`prompt: give text, such as "=> ", or {"regex": "RE2"}`)
	}
	t, err := steps.ParseTemplate(text)
	if err != nil {
		return nil, fmt.Errorf("prompt %q: %w", text, err)
	}
	p := &steps.PatternSpec{Text: t, Regex: regex}
	if regex {
		if _, err := stream.Regexp(text); err != nil {
			return nil, fmt.Errorf("prompt: %w", err)
		}
	}
	return p, nil
}

func (s *Server) serialOpen(ctx context.Context, req mcp.CallToolRequest, a *openArgs) (any, string, error) {
	if a.Port == "" {
		return nil, "", errors.New("port is required: a device path such as /dev/ttyACM0 (see list_ports), or the name of a device of the server's bench file")
	}
	bench := s.benchDevice(a.Port)
	if bench != nil {
		if err := s.openBenchDevice(ctx, a, bench); err != nil {
			return nil, "", err
		}
	}
	if err := s.checkPort(a.Port); err != nil {
		return nil, "", err
	}
	baud := a.Baud
	if baud == 0 {
		baud = a.BaudRate
	}
	if baud == 0 {
		baud = 115200
	}
	le := strings.ToLower(a.LineEnding)
	switch le {
	case "":
		le = "lf"
	case "lf", "crlf", "cr", "none":
	default:
		return nil, "", fmt.Errorf("line_ending %q: want lf, crlf, cr or none", a.LineEnding)
	}
	var prompt *steps.PatternSpec
	if a.Prompt != nil {
		var err error
		v := a.Prompt
		if t, ok := v.(string); ok && a.PromptRegex {
			v = map[string]any{"regex": t}
		}
		if prompt, err = openPrompt(v); err != nil {
			return nil, "", err
		}
	}
	echo := a.Echo != nil && *a.Echo
	stop := ""
	switch v := a.StopBits.(type) {
	case nil:
	case string:
		stop = v
	default:
		stop = fmt.Sprint(v)
	}
	if a.Label != "" && (!nameRE.MatchString(a.Label) || connIDRE.MatchString(a.Label)) {
		return nil, "", fmt.Errorf("label %q: use letters, digits and underscores, not starting with a digit, and not of the form c1 (the connection ids)", a.Label)
	}
	if err := s.checkOpenable(a.Port, a.Label); err != nil {
		return nil, "", err
	}
	release, err := s.locks.acquire(ctx, []string{portKey(realPort(a.Port))}, who(ctx, req), lockWait(a.LockTimeoutMS))
	if err != nil {
		return nil, "", err
	}
	defer release()
	// Look again: while this call waited for the port, the holder may have
	// been another serial_open of it.
	if err := s.checkOpenable(a.Port, a.Label); err != nil {
		return nil, "", err
	}
	s.mu.Lock()
	s.nextID++
	id := "c" + strconv.Itoa(s.nextID)
	s.mu.Unlock()
	cfg := serialx.Config{
		Path: a.Port, Baud: baud, DataBits: int(a.DataBits), Parity: a.Parity, StopBits: stop,
		FlowControl: a.FlowControl, LogDir: filepath.Join(s.logDir, "connections", id),
	}
	if bench != nil && s.cfg.SerialConfig != nil {
		// What the bench file declares and the call cannot say: modem
		// lines, reconnection, buffer, finding a USB device again.
		d := s.cfg.SerialConfig(bench)
		cfg.DTR, cfg.RTS, cfg.Reconnect, cfg.BufferSize, cfg.Resolve = d.DTR, d.RTS, d.Reconnect, d.BufferSize, d.Resolve
	}
	name := a.Label
	if name == "" {
		name = id
	}
	con, err := s.cfg.OpenConsole(ctx, name, cfg)
	if err != nil {
		return nil, "", err
	}
	c := &connection{id: id, label: a.Label, port: a.Port, cfg: cfg, lineEnding: le, prompt: prompt, echo: echo, console: con, opened: time.Now(), owner: sessionOwner(ctx)}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		con.Close()
		return nil, "", errors.New("the server is shutting down")
	}
	if a.Label != "" {
		// The port lock does not cover the label: another port may have
		// been opened with it meanwhile.
		if o := s.findConnLocked(a.Label); o != nil {
			s.mu.Unlock()
			con.Close()
			return nil, "", fmt.Errorf("label %q is taken by connection %s", a.Label, o.id)
		}
	}
	s.conns[id] = c
	s.mu.Unlock()
	s.addConnResource(c)
	s.logf("opened %s as %s at %d baud", a.Port, id, baud)
	out := openResult{ConnectionID: id, Label: a.Label, Port: a.Port, Baud: baud, LineEnding: le, Echo: echo, Cursor: con.Cursor(), LogResource: connLogURI(id)}
	if prompt != nil {
		out.Prompt = prompt.Text.Raw
		if prompt.Regex {
			out.Prompt = prompt.String()
		}
	}
	return out, fmt.Sprintf("opened %s as connection %s at %d baud (cursor %d)", a.Port, id, baud, out.Cursor), nil
}

// checkOpenable fails when port is open already or label is taken.
func (s *Server) checkOpenable(port, label string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.findConnLocked(port); c != nil {
		return fmt.Errorf("port %s is already open as connection %s", port, c.id)
	}
	if label != "" {
		if c := s.findConnLocked(label); c != nil {
			return fmt.Errorf("label %q is taken by connection %s", label, c.id)
		}
	}
	return nil
}

// --- serial_close ---

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

func first(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// --- serial_status ---

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

// --- serial_write ---

type writeArgs struct {
	Connection    string `json:"connection"`
	ConnectionID  string `json:"connection_id"`
	Data          string `json:"data"`
	Encoding      string `json:"encoding"`
	Newline       any    `json:"newline"`
	Ctrl          string `json:"ctrl"`
	LockTimeoutMS *int64 `json:"lock_timeout_ms"`
}

type writeResult struct {
	ConnectionID string `json:"connection_id"`
	Cursor       int64  `json:"cursor"`
	Bytes        int    `json:"bytes"`
}

// ctrlByte is the byte of a control key: "c", "ctrl-c", "^c" give 0x03.
func ctrlByte(k string) (byte, error) {
	t := strings.TrimSpace(k)
	t = strings.TrimPrefix(strings.TrimPrefix(strings.ToLower(t), "ctrl-"), "ctrl+")
	t = strings.TrimPrefix(t, "^")
	if len(t) == 1 {
		c := t[0]
		switch {
		case c >= 'a' && c <= 'z':
			return c - 'a' + 1, nil
		case c >= '@' && c <= '_':
			return c - '@', nil
		}
	}
	if t == "" && strings.HasSuffix(k, "^") {
		return 0x1e, nil
	}
	return 0, fmt.Errorf("ctrl %q: want a letter (c for Ctrl-C) or one of @ [ \\ ] ^ _", k)
}

func decodeData(data, encoding string) ([]byte, error) {
	switch strings.ToLower(encoding) {
	case "", "utf8", "utf-8", "text":
		return []byte(data), nil
	case "hex":
		clean := strings.NewReplacer(" ", "", ":", "", "-", "", "\n", "", "\t", "", "0x", "", "0X", "").Replace(data)
		b, err := hex.DecodeString(clean)
		if err != nil {
			return nil, fmt.Errorf("data is not hex: %v", err)
		}
		return b, nil
	case "base64":
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(data))
		if err != nil {
			return nil, fmt.Errorf("data is not base64: %v", err)
		}
		return b, nil
	}
	return nil, fmt.Errorf("encoding %q: want utf8, hex or base64", encoding)
}

func (s *Server) serialWrite(ctx context.Context, req mcp.CallToolRequest, a *writeArgs) (any, string, error) {
	c, err := s.connection(first(a.Connection, a.ConnectionID))
	if err != nil {
		return nil, "", err
	}
	var data []byte
	switch {
	case a.Ctrl != "" && a.Data != "":
		return nil, "", errors.New("give data or ctrl, not both")
	case a.Ctrl != "":
		b, err := ctrlByte(a.Ctrl)
		if err != nil {
			return nil, "", err
		}
		data = []byte{b}
	default:
		if data, err = decodeData(a.Data, a.Encoding); err != nil {
			return nil, "", err
		}
	}
	switch v := a.Newline.(type) {
	case nil:
	case bool:
		if v {
			data = append(data, steps.LineEndingBytes(c.lineEnding)...)
		}
	case string:
		switch strings.ToLower(v) {
		case "lf", "crlf", "cr", "none":
			data = append(data, steps.LineEndingBytes(strings.ToLower(v))...)
		case "true":
			data = append(data, steps.LineEndingBytes(c.lineEnding)...)
		case "false", "":
		default:
			return nil, "", fmt.Errorf("newline %q: want true, false, lf, crlf, cr or none", v)
		}
	default:
		return nil, "", fmt.Errorf("newline: want true, false or a line ending (lf, crlf, cr, none)")
	}
	if len(data) == 0 {
		return nil, "", errors.New("nothing to write: give data, ctrl or newline")
	}
	release, err := s.locks.acquire(ctx, []string{portKey(realPort(c.port))}, who(ctx, req), lockWait(a.LockTimeoutMS))
	if err != nil {
		return nil, "", err
	}
	defer release()
	cur, err := c.console.Write(ctx, data)
	if err != nil {
		return nil, "", fmt.Errorf("write to %s: %w", c.port, err)
	}
	return writeResult{ConnectionID: c.id, Cursor: cur, Bytes: len(data)},
		fmt.Sprintf("wrote %d bytes to %s (%s); cursor before the write: %d", len(data), c.id, stream.Quote(data), cur), nil
}

// --- serial_read ---

type readArgs struct {
	Connection       string `json:"connection"`
	ConnectionID     string `json:"connection_id"`
	Cursor           *int64 `json:"cursor"`
	MaxBytes         int    `json:"max_bytes"`
	Encoding         string `json:"encoding"`
	TimeoutMS        int64  `json:"timeout_ms"`
	DurationMS       int64  `json:"duration_ms"`
	StartTrigger     string `json:"start_trigger"`
	InitialTimeoutMS int64  `json:"initial_timeout_ms"`
	IdleTimeoutMS    int64  `json:"idle_timeout_ms"`
	LockTimeoutMS    *int64 `json:"lock_timeout_ms"`
}

type readResult struct {
	ConnectionID string `json:"connection_id"`
	Data         string `json:"data"`
	Encoding     string `json:"encoding"`
	Start        int64  `json:"start"`
	Cursor       int64  `json:"cursor"`
	Bytes        int    `json:"bytes"`
	Reason       string `json:"reason"`
}

// defaultMaxRead bounds a serial_read that does not say.
const defaultMaxRead = 64 << 10

// burstIdle ends a timeout_ms read once the device pauses.
const burstIdle = 20 * time.Millisecond

// maxReadWindow bounds a serial_read's capture window and first-byte wait.
const maxReadWindow = time.Hour

func (s *Server) serialRead(ctx context.Context, req mcp.CallToolRequest, a *readArgs) (any, string, error) {
	c, err := s.connection(first(a.Connection, a.ConnectionID))
	if err != nil {
		return nil, "", err
	}
	enc := strings.ToLower(a.Encoding)
	if enc == "" {
		enc = "utf8"
	}
	if _, err := encodeBytes(nil, enc); err != nil {
		return nil, "", err
	}
	max := a.MaxBytes
	if max <= 0 {
		max = defaultMaxRead
	}
	trigger := strings.ToLower(a.StartTrigger)
	switch trigger {
	case "", "first_byte", "immediate":
	default:
		return nil, "", fmt.Errorf("start_trigger %q: want immediate or first_byte", a.StartTrigger)
	}
	release, err := s.locks.acquire(ctx, []string{portKey(realPort(c.port))}, who(ctx, req), lockWait(a.LockTimeoutMS))
	if err != nil {
		return nil, "", err
	}
	defer release()

	var data []byte
	var start, next int64
	reason := ""
	switch {
	case a.DurationMS > 0 || a.IdleTimeoutMS > 0 || a.InitialTimeoutMS > 0:
		// A capture window: from the cursor given, else from where the
		// last read ended, so that what arrived between the two reads (a
		// reply to a serial_write just before) is in it: a reader's cursor
		// never passes bytes it was not given.
		from := c.readFrom(a.Cursor)
		opt := stream.CaptureOptions{StartOnFirstByte: trigger != "immediate", MaxBytes: max}
		for _, w := range []struct {
			name string
			ms   int64
			d    *time.Duration
		}{{"duration_ms", a.DurationMS, &opt.Duration}, {"idle_timeout_ms", a.IdleTimeoutMS, &opt.IdleTimeout}, {"initial_timeout_ms", a.InitialTimeoutMS, &opt.InitialTimeout}} {
			if *w.d, err = msArg(w.name, w.ms, maxReadWindow); err != nil {
				return nil, "", err
			}
		}
		if opt.Duration == 0 && opt.IdleTimeout == 0 {
			opt.Duration = opt.InitialTimeout
		}
		if opt.StartOnFirstByte && opt.InitialTimeout == 0 {
			// A window that waits for its first byte on a silent device
			// would never end: it waits as long as the window lasts.
			opt.InitialTimeout = opt.Duration
			if opt.IdleTimeout > opt.InitialTimeout {
				opt.InitialTimeout = opt.IdleTimeout
			}
		}
		capt, err := c.console.Capture(ctx, from, opt)
		if err != nil && len(capt.Data) == 0 && ctx.Err() == nil {
			return nil, "", fmt.Errorf("capture on %s: %w", c.port, err)
		}
		data, start, next, reason = capt.Data, capt.Start, capt.End, capt.Reason
		if err != nil {
			reason = "interrupted"
		}
	case a.TimeoutMS > 0:
		// Wait up to timeout_ms for the first byte, then return the burst.
		from := c.readFrom(a.Cursor)
		first, err := msArg("timeout_ms", a.TimeoutMS, maxReadWindow)
		if err != nil {
			return nil, "", err
		}
		capt, err := c.console.Capture(ctx, from, stream.CaptureOptions{
			InitialTimeout: first,
			IdleTimeout:    burstIdle, StartOnFirstByte: true, MaxBytes: max,
		})
		if err != nil && ctx.Err() == nil && len(capt.Data) == 0 {
			return nil, "", fmt.Errorf("read from %s: %w", c.port, err)
		}
		data, start, next, reason = capt.Data, capt.Start, capt.End, capt.Reason
		if reason == stream.ReasonNoData {
			reason = "timeout"
		} else if reason == "" || reason == stream.ReasonIdle {
			reason = "data"
		}
		if next < from {
			next = from
		}
	default:
		from := c.readFrom(a.Cursor)
		data, start, next = c.console.Read(from, max)
		reason = "available"
		if len(data) == max {
			reason = stream.ReasonMaxBytes
		}
	}
	c.mu.Lock()
	if next > c.readCursor || a.Cursor != nil {
		c.readCursor = next
	}
	c.mu.Unlock()
	text, _ := encodeBytes(data, enc)
	out := readResult{ConnectionID: c.id, Data: text, Encoding: enc, Start: start, Cursor: next, Bytes: len(data), Reason: reason}
	return out, fmt.Sprintf("%d bytes from %s [%d, %d) (%s): %s", len(data), c.id, start, next, reason, printable(data)), nil
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

// --- serial_expect ---

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

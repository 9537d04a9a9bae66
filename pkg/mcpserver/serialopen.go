package mcpserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

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
	o, err := readOpenArgs(a)
	if err != nil {
		return nil, "", err
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
	cfg := s.openConfig(a, o, id, bench)
	cfg.Secrets = s.cfg.Secrets
	name := a.Label
	if name == "" {
		name = id
	}
	con, err := s.cfg.OpenConsole(ctx, name, cfg)
	if err != nil {
		return nil, "", err
	}
	c := &connection{id: id, label: a.Label, port: a.Port, cfg: cfg, lineEnding: o.lineEnding, prompt: o.prompt, echo: o.echo, console: con, opened: time.Now(), owner: sessionOwner(ctx)}
	if err := s.addConn(c); err != nil {
		con.Close()
		return nil, "", err
	}
	s.logf("opened %s as %s at %d baud", a.Port, id, o.baud)
	out := c.describe()
	return out, fmt.Sprintf("opened %s as connection %s at %d baud (cursor %d)", a.Port, id, o.baud, out.Cursor), nil
}

// openSettings are serial_open's arguments read and checked.
type openSettings struct {
	baud       int
	lineEnding string
	prompt     *steps.PatternSpec
	echo       bool
	stopBits   string
}

// readOpenArgs reads and checks serial_open's settings, filling in the
// defaults: 115200 baud, lf.
func readOpenArgs(a *openArgs) (openSettings, error) {
	o := openSettings{baud: cmp.Or(a.Baud, a.BaudRate, 115200), echo: a.Echo != nil && *a.Echo}
	o.lineEnding = strings.ToLower(a.LineEnding)
	switch o.lineEnding {
	case "":
		o.lineEnding = "lf"
	case "lf", "crlf", "cr", "none":
	default:
		return o, fmt.Errorf("line_ending %q: want lf, crlf, cr or none", a.LineEnding)
	}
	if a.Prompt != nil {
		v := a.Prompt
		if t, ok := v.(string); ok && a.PromptRegex {
			v = map[string]any{"regex": t}
		}
		var err error
		if o.prompt, err = openPrompt(v); err != nil {
			return o, err
		}
	}
	switch v := a.StopBits.(type) {
	case nil:
	case string:
		o.stopBits = v
	default:
		o.stopBits = fmt.Sprint(v)
	}
	if a.Label != "" && (!nameRE.MatchString(a.Label) || connIDRE.MatchString(a.Label)) {
		return o, fmt.Errorf("label %q: use letters, digits and underscores, not starting with a digit, and not of the form c1 (the connection ids)", a.Label)
	}
	return o, nil
}

// openConfig is the serial configuration of connection id: the call's
// settings, and what a device of the bench file declares that the call
// cannot say.
func (s *Server) openConfig(a *openArgs, o openSettings, id string, bench *steps.Device) serialx.Config {
	cfg := serialx.Config{
		Path: a.Port, Baud: o.baud, DataBits: int(a.DataBits), Parity: a.Parity, StopBits: o.stopBits,
		FlowControl: a.FlowControl, LogDir: filepath.Join(s.logDir, "connections", id),
	}
	if bench != nil && s.cfg.SerialConfig != nil {
		// Modem lines, reconnection, buffer, finding a USB device again.
		d := s.cfg.SerialConfig(bench)
		cfg.DTR, cfg.RTS, cfg.Reconnect, cfg.BufferSize, cfg.Resolve = d.DTR, d.RTS, d.Reconnect, d.BufferSize, d.Resolve
	}
	return cfg
}

// addConn adds c to the open connections and serves its log, unless the
// server is shutting down or c's label was taken meanwhile (the port lock
// does not cover the label: another port may have been opened with it).
func (s *Server) addConn(c *connection) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("the server is shutting down")
	}
	if c.label != "" {
		if o := s.findConnLocked(c.label); o != nil {
			s.mu.Unlock()
			return fmt.Errorf("label %q is taken by connection %s", c.label, o.id)
		}
	}
	s.conns[c.id] = c
	s.mu.Unlock()
	s.addConnResource(c)
	return nil
}

// describe is serial_open's result for c.
func (c *connection) describe() openResult {
	out := openResult{ConnectionID: c.id, Label: c.label, Port: c.port, Baud: c.cfg.Baud, LineEnding: c.lineEnding, Echo: c.echo, Cursor: c.console.Cursor(), LogResource: connLogURI(c.id)}
	if c.prompt != nil {
		out.Prompt = c.prompt.Text.Raw
		if c.prompt.Regex {
			out.Prompt = c.prompt.String()
		}
	}
	return out
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

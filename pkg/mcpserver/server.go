// Package mcpserver serves hilrun over the Model Context Protocol: one
// endpoint whose serial_sequence tool runs a whole step list inside the
// runner with real timing between steps, next to primitive tools for serial
// consoles (serial_open, serial_write, serial_read, serial_expect, ...),
// target memory (mem_read, mem_write), and firmware builds and uploads
// (build, upload, task_status).
//
// The server denies by default: every step kind and tool says what it can
// do (steps.Kinds, and each tool of toolGroups beside its spec and
// handler), and Policy.Allow says which of those capabilities the server's
// flags open. Host programs (exec, build and
// upload commands) need AllowExec and a root, raw OpenOCD Tcl needs
// AllowDebugTcl, and ReadOnly refuses everything that changes the target
// or the host.
//
// Tool calls may arrive concurrently. A port or probe is held by one call at
// a time; a sequence holds its ports and probes until it ends. Console logs
// and run reports stay readable as MCP resources after the call that made
// them.
package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hilrun/hilrun/pkg/elfsym"
	"io"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/hilrun/hilrun/pkg/pio"
	"github.com/hilrun/hilrun/pkg/proc/tmpdir"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// Console is a serial console as the server uses it. *serialx.Console
// satisfies it.
type Console interface {
	runner.Console
	// Read returns retained output from cursor from, at most max bytes
	// (max <= 0: all); next is the cursor to read from next.
	Read(from int64, max int) (data []byte, start, next int64)
	Stats() serialx.Stats
	LogPaths() (raw, timeline string)
}

// ConsoleOpener opens a serial console called name.
type ConsoleOpener func(ctx context.Context, name string, cfg serialx.Config) (Console, error)

// ProbeDialer opens one persistent debugger session of probe p through its
// backend; a debugger server launched for it gets exactly the environment
// environ and works in folder dir. hilrun mcp passes internal/engine's.
type ProbeDialer func(ctx context.Context, p *steps.Probe, environ []string, dir string) (runner.Debugger, error)

// Config configures a Server. The zero value serves no files and allows
// every port; it opens real serial ports for serial_open, but what opens
// probes, converts a sequence's device settings, runs builds and takes
// pictures comes from Engine and the wiring fields (DialProbe,
// SerialConfig), which hilrun mcp fills from internal/engine: without
// them, steps that need them end in an error.
type Config struct {
	// Name and Version are reported to clients; "" means "hilrun" and "dev".
	Name, Version string
	Policy        Policy
	// Bench binds device and probe names (from --bench) to this bench's
	// ports and OpenOCDs; nil binds nothing.
	Bench *steps.Bench
	// DefaultPort is the serial port of devices nothing else binds, and of
	// steps without to: when no connection is open: the virtual board's
	// console under --sim. It is exempt from the port globs.
	DefaultPort string
	// DefaultOpenOCD is the OpenOCD telnet address of every probe nothing
	// else binds: the virtual board's under --sim.
	DefaultOpenOCD string
	// DefaultGDB is the GDB remote address of every probe nothing else
	// binds: QEMU's GDB server under --qemu. It wins over DefaultOpenOCD.
	DefaultGDB string
	// DefaultBoard names what DefaultPort is, for list_ports.
	DefaultBoard string
	// Camera, when set, is the input every camera a sequence names reads,
	// with ffmpeg input format CameraFormat: the virtual board's camera
	// under --sim.
	Camera, CameraFormat string
	// LogDir holds console logs and run reports; "" means a temporary
	// folder that Close removes.
	LogDir string
	// MaxRuns bounds how many runs stay readable as resources; 0 means
	// DefaultMaxRuns.
	MaxRuns int
	// MaxRunAge is how long a run stays readable after it ended; 0 means
	// DefaultMaxRunAge.
	MaxRunAge time.Duration
	// MaxValueBytes bounds each variable and saved value of a run (see
	// runner.Options.MaxValueBytes); 0 means 1 MiB.
	MaxValueBytes int
	// MaxExprWork and MaxExprMemory bound each evaluation of an
	// expression in a run (see runner.Options); 0 means the defaults.
	MaxExprWork, MaxExprMemory int
	// MaxSteps bounds the steps one call runs, repeat iterations included;
	// 0 means DefaultMaxSteps.
	MaxSteps uint64
	// Heartbeat is the longest a sequence called with a progress token
	// goes without a progress notification while a step runs (a long
	// delay or expect); 0 means DefaultHeartbeat.
	Heartbeat time.Duration
	// Log receives the server's log lines; nil means os.Stderr. It never
	// goes to standard output, which carries JSON-RPC under stdio.
	Log io.Writer

	// Engine is the bench sequences run on (internal/engine's, made with
	// the policy's environment for the programs it starts and none for
	// expressions): its symbols, builds, cameras, host commands and
	// checks. Each run wraps it with the consoles and probes the run
	// borrows or opens, and the run's own build logs.
	Engine runner.Bench

	// Wiring from hilrun's composition root for what outlives one run:
	// DialProbe opens the probe sessions the server keeps across calls;
	// SerialConfig is the serial configuration of a device.
	DialProbe    ProbeDialer
	SerialConfig func(*steps.Device) serialx.Config
	// PIORunner runs PlatformIO for the pio verbs; nil runs the pio on
	// PATH with the policy's environment.
	PIORunner pio.Runner

	// Seams for tests; nil means the real thing.
	OpenConsole ConsoleOpener
	OpenProbe   runner.ProbeOpener
	ListPorts   func() ([]serialx.PortInfo, error)
}

// Server is hilrun's MCP server. Create it with New and release it with
// Close.
type Server struct {
	cfg    Config
	mcp    *server.MCPServer
	locks  *locker
	leases *serialx.Leases // which session holds or released a port across calls
	logger *log.Logger
	logDir string
	// ownDir is the temporary log folder the server made, or nil.
	ownDir *tmpdir.Dir

	mu     sync.Mutex
	conns  map[string]*connection
	nextID int
	// closedConns are the ids of closed connections whose logs are kept,
	// oldest first: at most keepClosed (see forgetClosed).
	closedConns []string
	keepClosed  int
	probes      map[string]*pooledProbe
	// calls are the tool calls in flight, by callKey.
	calls map[string]*inflightCall
	// early are the cancellations of calls not in flight (cancelArrived).
	early   earlyCancels
	runs    *runStore
	tasks   *taskStore
	closed  bool
	closeMu sync.Mutex

	// life ends when the server closes; every tool call runs under it, and
	// Close waits for the calls in flight (their finally steps included)
	// before it closes what they use.
	life     context.Context
	stop     context.CancelFunc
	inflight sync.WaitGroup
}

// Bounds on the runs a server keeps readable as resources (with their logs,
// reports and pictures on disk).
const (
	DefaultMaxRuns   = 50
	DefaultMaxRunAge = 24 * time.Hour
)

// DefaultMaxSteps bounds the steps one call runs, repeat iterations
// included: a client cannot keep the server busy without end, and the
// result stays summarised within it.
const DefaultMaxSteps = 1_000_000

// closeWait bounds how long Close waits for cancelled calls to finish.
const closeWait = 30 * time.Second

// requestIDKey is where the tools/call hook leaves the JSON-RPC request id
// for the handler, in the request's _meta.
const requestIDKey = "dev.hilrun/request_id"

// New builds a server from cfg: it validates the policy and prepares the
// log folder.
func New(cfg Config) (*Server, error) {
	if cfg.Name == "" {
		cfg.Name = "hilrun"
	}
	if cfg.Version == "" {
		cfg.Version = "dev"
	}
	if cfg.MaxRuns <= 0 {
		cfg.MaxRuns = DefaultMaxRuns
	}
	if cfg.MaxSteps == 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.MaxRunAge <= 0 {
		cfg.MaxRunAge = DefaultMaxRunAge
	}
	if cfg.Log == nil {
		cfg.Log = os.Stderr
	}
	if cfg.OpenConsole == nil {
		cfg.OpenConsole = openSerial
	}
	if cfg.Engine.Symbols == nil {
		cfg.Engine.Symbols = elfsym.LookupSymbol
	}
	if cfg.ListPorts == nil {
		cfg.ListPorts = serialx.ListPorts
	}
	if err := cfg.Policy.Validate(); err != nil {
		return nil, err
	}
	s := &Server{
		cfg:    cfg,
		locks:  newLocker(),
		logger: log.New(cfg.Log, "hilrun mcp: ", log.LstdFlags),
		conns:  map[string]*connection{},
		probes: map[string]*pooledProbe{},
		calls:  map[string]*inflightCall{},
	}
	if s.cfg.OpenProbe == nil {
		s.cfg.OpenProbe = s.dialProbe
	}
	if cfg.LogDir == "" {
		dir, err := tmpdir.New("mcp")
		if err != nil {
			return nil, fmt.Errorf("create the log folder: %w", err)
		}
		s.logDir, s.ownDir = dir.Path, dir
	} else {
		if err := os.MkdirAll(cfg.LogDir, 0o755); err != nil {
			return nil, fmt.Errorf("create the log folder: %w", err)
		}
		s.logDir = cfg.LogDir
	}
	hooks := &server.Hooks{}
	hooks.AddOnUnregisterSession(s.unregistered)
	hooks.AddBeforeCallTool(func(ctx context.Context, id any, req *mcp.CallToolRequest) {
		// Handlers do not see the request id; pass it in a copy of _meta
		// so "busy: held by" can name the call.
		m := &mcp.Meta{AdditionalFields: map[string]any{}}
		if req.Params.Meta != nil {
			m.ProgressToken = req.Params.Meta.ProgressToken
			for k, v := range req.Params.Meta.AdditionalFields {
				m.AdditionalFields[k] = v
			}
		}
		m.AdditionalFields[requestIDKey] = id
		req.Params.Meta = m
	})
	hooks.AddBeforeReadResource(s.markMissingResource)
	s.life, s.stop = context.WithCancel(context.Background())
	s.mcp = server.NewMCPServer(cfg.Name, cfg.Version,
		server.WithToolHandlerMiddleware(s.track),
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(false, true),
		server.WithRecovery(),
		server.WithResourceRecovery(),
		server.WithHooks(hooks),
		server.WithInstructions(instructions),
	)
	s.runs = newRunStore(s)
	go s.runs.expire(s.life, min(max(cfg.MaxRunAge/4, 10*time.Millisecond), time.Minute))
	s.tasks = &taskStore{s: s}
	s.keepClosed = maxClosedLogs
	// A --log-dir may hold an earlier server's connections, runs and
	// tasks: number after them, so that no log or report of theirs is
	// overwritten, or served as this server's.
	s.nextID = lastID(filepath.Join(s.logDir, "connections"), "c", "")
	s.runs.next = lastID(filepath.Join(s.logDir, "runs"), "r", "")
	s.tasks.next = lastID(filepath.Join(s.logDir, "tasks"), "t", ".log")
	s.leases = serialx.NewLeases()
	s.locks.check = s.leaseBusy
	s.addTools()
	s.addResourceTemplates()
	return s, nil
}

const instructions = `hilrun drives serial consoles and target memory for hardware-in-the-loop tests.
Prefer serial_sequence: it runs a whole list of steps (send/expect, delays, captures, memory reads and writes) inside hilrun with real timing between steps and returns one report.
Use serial_open/serial_write/serial_read/serial_expect for interactive work; every read returns a cursor, an absolute byte offset into what the device sent.
A port or probe serves one call at a time: a call that finds it busy fails at once unless it passes lock_timeout_ms.
build and upload run firmware builds and uploads (commands, PlatformIO, or an image through OpenOCD) inside the server's --root folders and return a compact outcome: ok, the failure class and first diagnostic, flash and RAM use; background: true returns a task_id for task_status. Sequences may hold build and upload steps too.
Console logs and reports stay readable as resources (hilrun://runs/{run_id}/report.json, hilrun://runs/{run_id}/report.html (a self-contained page for people), hilrun://runs/{run_id}/console/{name}.log, hilrun://connections/{id}/log, hilrun://tasks/{task_id}/log).`

// MCP returns the underlying mcp-go server, for transports and in-process
// clients.
func (s *Server) MCP() *server.MCPServer { return s.mcp }

// LogDir is the folder holding console logs and run reports.
func (s *Server) LogDir() string { return s.logDir }

// track runs a tool call under the server's life and counts it in flight,
// so Close can cancel it and wait for it, and the client's
// notifications/cancelled can end it (cancelArrived), even one that came
// before the call started.
func (s *Server) track(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return mcp.NewToolResultError("the server is shutting down"), nil
		}
		s.inflight.Add(1)
		s.mu.Unlock()
		defer s.inflight.Done()
		cctx, cancel := context.WithCancel(ctx)
		defer cancel()
		call := s.calling(ctx, req, cancel)
		defer s.called(call)
		stop := context.AfterFunc(s.life, cancel)
		defer stop()
		var res *mcp.CallToolResult
		var err error
		if s.cancelledByClient(call) {
			res = mcp.NewToolResultError("cancelled by the client before it started")
		} else {
			beat := s.startBeat(cctx, req)
			res, err = next(withBeat(cctx, beat), req)
			// No heartbeat after the result.
			beat.stop()
		}
		if ctx.Err() != nil || s.cancelledByClient(call) {
			// The client cancelled the call (notifications/cancelled, or
			// it went away): it gets no response, as the specification
			// says. A call the server's shutdown ended still does.
			if o := outboxOf(ctx); o != nil && req.Params.Meta != nil {
				if id, ok := req.Params.Meta.AdditionalFields[requestIDKey]; ok && id != nil {
					o.drop(id)
				}
			}
		}
		return res, err
	}
}

// callKey names a call by its session and JSON-RPC id; "" when it has no
// id.
func callKey(ctx context.Context, req mcp.CallToolRequest) string {
	if req.Params.Meta == nil {
		return ""
	}
	id, ok := req.Params.Meta.AdditionalFields[requestIDKey]
	if !ok || id == nil {
		return ""
	}
	session := sessionOf(ctx)
	if session == "" {
		if sess := server.ClientSessionFromContext(ctx); sess != nil {
			session = sess.SessionID()
		}
	}
	return cancelKey(session, id)
}

// Close cancels the calls in flight and waits for them (up to closeWait),
// then closes every connection and probe session and, when the server made
// its log folder, removes it. It is idempotent.
func (s *Server) Close() error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	s.stop()
	done := make(chan struct{})
	go func() { s.inflight.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(closeWait):
		s.logf("closing with tool calls still running after %s", closeWait)
	}
	s.mu.Lock()
	conns := s.conns
	s.conns = map[string]*connection{}
	probes := s.probes
	s.probes = map[string]*pooledProbe{}
	s.mu.Unlock()
	var errs []error
	for _, c := range conns {
		errs = append(errs, c.console.Close())
	}
	for _, p := range probes {
		p.close()
	}
	if s.ownDir != nil {
		errs = append(errs, s.ownDir.Remove())
	}
	return errors.Join(errs...)
}

func (s *Server) logf(format string, args ...any) { s.logger.Printf(format, args...) }

// openSerial opens a real serial console.
func openSerial(ctx context.Context, name string, cfg serialx.Config) (Console, error) {
	c, err := serialx.Open(ctx, name, cfg)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// who names the call behind ctx and req for "busy: held by ...": the tool,
// the JSON-RPC request id, and the client's name and session when known.
func who(ctx context.Context, req mcp.CallToolRequest) string {
	var parts []string
	if req.Params.Meta != nil {
		if id, ok := req.Params.Meta.AdditionalFields[requestIDKey]; ok && id != nil {
			parts = append(parts, fmt.Sprintf("request %v", id))
		}
	}
	if sess := server.ClientSessionFromContext(ctx); sess != nil {
		if ci, ok := sess.(server.SessionWithClientInfo); ok {
			if info := ci.GetClientInfo(); info.Name != "" {
				parts = append(parts, "client "+info.Name)
			}
		}
		if id := sess.SessionID(); id != "" {
			if len(id) > 12 {
				id = id[:12]
			}
			parts = append(parts, "session "+id)
		}
	}
	if len(parts) == 0 {
		return req.Params.Name
	}
	return req.Params.Name + " (" + strings.Join(parts, ", ") + ")"
}

// bind decodes the call's arguments into v, refusing unknown ones so a
// misspelt argument is reported rather than ignored.
func bind(req mcp.CallToolRequest, v any) error {
	data := []byte(req.Params.RawArguments)
	if len(bytes.TrimSpace(data)) == 0 || string(bytes.TrimSpace(data)) == "null" {
		var err error
		if req.Params.Arguments == nil {
			data = []byte("{}")
		} else if data, err = json.Marshal(req.Params.Arguments); err != nil {
			return fmt.Errorf("arguments: %w", err)
		}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("arguments of %s: %s", req.Params.Name, strings.TrimPrefix(err.Error(), "json: "))
	}
	return nil
}

// toolHandler turns a function returning a structured value and a text
// summary into an mcp-go handler; an error becomes an isError result whose
// text is the error.
func toolHandler[A any](s *Server, fn func(ctx context.Context, req mcp.CallToolRequest, args *A) (any, string, error)) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := new(A)
		if err := bind(req, args); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		out, text, err := fn(ctx, req, args)
		if err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		// Clients check structured content against the output schemas; a
		// mismatch is a bug of ours, better reported by us (see nullField).
		if p := nullField(out); p != "" {
			s.logf("%s: the result holds null at %s, which its output schema does not allow", req.Params.Name, p)
			return mcp.NewToolResultError(fmt.Sprintf("internal error: the result of %s holds null at %s, which its output schema does not allow (a bug of hilrun: please report it)", req.Params.Name, p)), nil
		}
		if text == "" {
			b, _ := json.Marshal(out)
			text = string(b)
		}
		res := mcp.NewToolResultStructured(out, text)
		if p, ok := out.(interface{ pictures() (paths, uris []string) }); ok {
			res.Content = append(res.Content, imageContents(p.pictures())...)
		}
		return res, nil
	}
}

// Bounds on the pictures one tool result carries, so that a capture of
// many frames does not flood the client's context.
const (
	maxPictures     = 8
	maxPictureBytes = 8 << 20
)

// imageContents reads pictures (files, with their resource URIs) as MCP
// image content, the last maxPictures of them within maxPictureBytes in
// all; a text item names the resources of those left out.
func imageContents(paths, uris []string) []mcp.Content {
	var out []mcp.Content
	var left []string
	total := 0
	start := max(len(paths)-maxPictures, 0)
	left = append(left, uris[:start]...)
	for i, p := range paths[start:] {
		data, err := os.ReadFile(p)
		if err != nil || total+len(data) > maxPictureBytes {
			left = append(left, uris[start+i])
			continue
		}
		total += len(data)
		out = append(out, mcp.NewImageContent(base64Std(data), "image/png"))
	}
	if len(left) > 0 {
		out = append(out, mcp.NewTextContent(fmt.Sprintf("%d more picture(s) are not shown here; read them as resources: %s", len(left), strings.Join(left, ", "))))
	}
	return out
}

// maxLockWait bounds lock_timeout_ms: a wait for a port or probe that
// another call holds.
const maxLockWait = time.Hour

// lockWait is the lock_timeout_ms argument as a duration, at most
// maxLockWait (a longer wait is only a longer "up to").
func lockWait(ms *int64) time.Duration {
	if ms == nil || *ms <= 0 {
		return 0
	}
	if *ms >= int64(maxLockWait/time.Millisecond) {
		return maxLockWait
	}
	return time.Duration(*ms) * time.Millisecond
}

// msArg is a client's millisecond argument name as a duration: from 0 to
// max, else an error naming it, so that no value wraps around into another
// (18446744073710 ms is not half a millisecond).
func msArg(name string, ms int64, max time.Duration) (time.Duration, error) {
	if ms < 0 || ms > int64(max/time.Millisecond) {
		return 0, fmt.Errorf("%s must be from 0 to %d (%v), found %d", name, int64(max/time.Millisecond), max, ms)
	}
	return time.Duration(ms) * time.Millisecond, nil
}

// encodeBytes renders data for a client: utf8 (invalid bytes become
// U+FFFD), hex (space-separated pairs) or base64.
func encodeBytes(data []byte, encoding string) (string, error) {
	switch strings.ToLower(encoding) {
	case "", "utf8", "utf-8", "text":
		return strings.ToValidUTF8(string(data), "\uFFFD"), nil
	case "hex":
		var sb strings.Builder
		for i, c := range data {
			if i > 0 {
				sb.WriteByte(' ')
			}
			fmt.Fprintf(&sb, "%02x", c)
		}
		return sb.String(), nil
	case "base64":
		return base64Std(data), nil
	}
	return "", fmt.Errorf("encoding %q: want utf8, hex or base64", encoding)
}

// printable is data as one line for text summaries.
func printable(data []byte) string { return stream.Printable(data) }

// lastID returns the highest N of the entries of dir named prefix+N+suffix
// (N a decimal number), 0 when there is none.
func lastID(dir, prefix, suffix string) int {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	last := 0
	for _, e := range entries {
		digits, ok := strings.CutPrefix(e.Name(), prefix)
		if !ok {
			continue
		}
		if digits, ok = strings.CutSuffix(digits, suffix); !ok {
			continue
		}
		if n, err := strconv.Atoi(digits); err == nil && n > last && strconv.Itoa(n) == digits {
			last = n
		}
	}
	return last
}

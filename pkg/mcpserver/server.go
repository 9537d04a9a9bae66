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
	"cmp"
	"context"
	"errors"
	"fmt"
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

	"github.com/hilrun/hilrun/pkg/elfsym"
	"github.com/hilrun/hilrun/pkg/gate"
	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/pio"
	"github.com/hilrun/hilrun/pkg/proc/tmpdir"
	"github.com/hilrun/hilrun/pkg/redact"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
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
// backend, through the server's gates; a debugger server launched for it
// works in folder dir. hilrun mcp passes internal/engine's, made with
// Config.Gates.
type ProbeDialer = func(ctx context.Context, p *steps.Probe, dir string) (runner.Debugger, error)

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
	// Secrets are the server's secrets (hilrun mcp's --secret and its
	// --bench): sequences send them as ${name}; every console the server
	// opens masks them, and every result redacts them. A client never
	// gives one. nil has none.
	Secrets *redact.Set
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
	// Gates are the policies every effect of the server passes through
	// (programs, files, addresses, devices, environment); the zero value
	// means ServerGates, the policy's own, which Wire gets.
	Gates gate.Policy
	// Log receives the server's log lines; nil means os.Stderr. It never
	// goes to standard output, which carries JSON-RPC under stdio.
	Log io.Writer

	// Engine is the bench sequences run on (internal/engine's, made with
	// the policy's environment for the programs it starts and none for
	// expressions): its symbols, builds, cameras, host commands and
	// checks. Each run wraps it with the consoles and probes the run
	// borrows or opens, and the run's own build logs.
	Engine runner.Bench

	// Wire, when set, is hilrun's composition root for the server: given
	// the server's gates (Gates, taken once the configuration is
	// complete), it returns Engine, DialProbe and SerialConfig, all made
	// with those gates. hilrun mcp passes internal/engine.MCPWire.
	Wire func(gate.Policy) (runner.Bench, ProbeDialer, func(*steps.Device) serialx.Config)

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
	// own opens the server's own files (run folders, logs, reports,
	// pictures): only under logDir, whatever a run's events name.
	own files.Policy
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
	early earlyCancels
	runs  *runStore
	tasks *taskStore
	// ladder is the --bench file's recovery ladder (recover.go), nil
	// when it has no health check.
	ladder  *benchLadder
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

// New builds a server from cfg: it validates the policy and prepares the
// log folder.
func New(cfg Config) (*Server, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Policy.Validate(); err != nil {
		return nil, err
	}

	s := &Server{
		cfg:    cfg,
		locks:  newLocker(),
		leases: serialx.NewLeases(),
		logger: log.New(cfg.Log, "hilrun mcp: ", log.LstdFlags),
		conns:  map[string]*connection{},
		probes: map[string]*pooledProbe{},
		calls:  map[string]*inflightCall{},
	}
	s.locks.check = s.leaseBusy
	if s.cfg.Gates.Procs.Allow == nil {
		s.cfg.Gates = s.cfg.ServerGates()
	}
	if s.cfg.Wire != nil {
		s.cfg.Engine, s.cfg.DialProbe, s.cfg.SerialConfig = s.cfg.Wire(s.cfg.Gates)
	}
	if s.cfg.Engine.Symbols == nil {
		s.cfg.Engine.Symbols = elfsym.Lookup(s.cfg.Gates.Files)
	}
	if s.cfg.OpenProbe == nil {
		s.cfg.OpenProbe = s.dialProbe
	}
	if s.cfg.OpenConsole == nil {
		s.cfg.OpenConsole = s.openSerial
	}
	if err := s.checkLadder(); err != nil {
		return nil, err
	}
	if err := s.openLogDir(); err != nil {
		return nil, err
	}
	own, err := files.Under(s.logDir)
	if err != nil {
		return nil, fmt.Errorf("the log folder: %w", err)
	}
	s.own = own
	s.life, s.stop = context.WithCancel(context.Background())
	s.mcp = server.NewMCPServer(cfg.Name, cfg.Version,
		server.WithToolHandlerMiddleware(s.track),
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(false, true),
		server.WithRecovery(),
		server.WithResourceRecovery(),
		server.WithHooks(s.hooks()),
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
	s.addTools()
	s.addResourceTemplates()
	return s, nil
}

// withDefaults is c with what it leaves out filled in.
func (c Config) withDefaults() Config {
	c.Name = cmp.Or(c.Name, "hilrun")
	c.Version = cmp.Or(c.Version, "dev")
	if c.MaxRuns <= 0 {
		c.MaxRuns = DefaultMaxRuns
	}
	if c.MaxSteps == 0 {
		c.MaxSteps = DefaultMaxSteps
	}
	if c.MaxRunAge <= 0 {
		c.MaxRunAge = DefaultMaxRunAge
	}
	if c.Log == nil {
		c.Log = os.Stderr
	}
	if c.ListPorts == nil {
		c.ListPorts = serialx.ListPorts
	}
	return c
}

// openLogDir makes the log folder: Config.LogDir, or a private temporary
// folder that Close removes.
func (s *Server) openLogDir() error {
	if s.cfg.LogDir == "" {
		dir, err := tmpdir.New("mcp")
		if err != nil {
			return fmt.Errorf("create the log folder: %w", err)
		}
		s.logDir, s.ownDir = dir.Path, dir
		return nil
	}
	if err := os.MkdirAll(s.cfg.LogDir, 0o755); err != nil {
		return fmt.Errorf("create the log folder: %w", err)
	}
	s.logDir = s.cfg.LogDir
	return nil
}

// hooks are what the server hears from mcp-go: sessions that end, each
// tools/call before its handler (to pass the request id on), and resources
// read that may be gone.
func (s *Server) hooks() *server.Hooks {
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
	return hooks
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

// openSerial opens a real serial console, through the server's device and
// dial gates whatever cfg says.
func (s *Server) openSerial(ctx context.Context, name string, cfg serialx.Config) (Console, error) {
	cfg.Devices, cfg.Dial = s.cfg.Gates.Devices, s.cfg.Gates.Dial
	c, err := serialx.Open(ctx, name, cfg)
	if err != nil {
		return nil, err
	}
	return c, nil
}

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

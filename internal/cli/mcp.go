package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/mcpserver"
	"github.com/hilrun/hilrun/pkg/qemu"
	"github.com/hilrun/hilrun/pkg/sim"
	"github.com/hilrun/hilrun/pkg/steps"
)

// MCPOptions are the inputs of hilrun mcp.
type MCPOptions struct {
	HTTP          string
	Token         string
	TokenFrom     string // where Token came from, for errors: --token or HILRUN_MCP_TOKEN
	AllowOrigins  []string
	MaxBody       int
	MinBodyRate   int
	AllowPorts    []string
	AllowProbes   []string
	Secrets       []string
	DenyPorts     []string
	ReadOnly      bool
	AllowExec     bool
	AllowDebugTcl bool
	PassEnv       []string
	AllowMemWrite []string
	Roots         []string
	Bench         string
	// NoRecover is --recover=false: the bench's health check and ladder
	// never run.
	NoRecover bool
	// Probes are --probe (--openocd, --gdb): probes bound as a --bench
	// entry would bind them.
	Probes    BindFlags
	Sim       bool
	QEMU      QEMUFlags
	LogDir    string
	MaxRuns   int
	MaxRunAge time.Duration
	Heartbeat time.Duration
	MaxSteps  uint64
	// MaxValue bounds each variable and saved value in a run, in bytes;
	// 0 means runner.DefaultMaxValueBytes.
	MaxValue int
	// Expr bounds each evaluation of an expression.
	Expr ExprFlags
}

func newMCPCmd(ios *IO) *cobra.Command {
	opts := &MCPOptions{}
	cmd := &cobra.Command{
		Use:   "mcp [flags]",
		Short: "Serve hilrun to AI agents over the Model Context Protocol",
		Long:  mcpLong,
		Example: `  hilrun mcp --sim                                  # try it against the virtual board
  hilrun mcp --http 127.0.0.1:4123 --root ./sequences --bench hilrun.bench.yaml
  hilrun mcp --allow-port '/dev/serial/by-id/*' --deny-port '/dev/ttyS*' --read-only
  claude mcp add hilrun -- hilrun mcp --sim`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.TokenFrom = "--token"
			if !cmd.Flags().Changed("token") {
				opts.Token, opts.TokenFrom = environ.Host().Get("HILRUN_MCP_TOKEN"), "HILRUN_MCP_TOKEN"
			}
			return MCP(cmd.Context(), ios, opts)
		},
	}
	opts.register(cmd.Flags())
	return cmd
}

// MCP serves hilrun's MCP server until the client goes away or a signal
// arrives.
func MCP(ctx context.Context, ios *IO, opts *MCPOptions) error {
	httpOpts, err := checkHTTPOptions(opts)
	if err != nil {
		return invalid(err)
	}
	cfg, err := mcpConfig(ios, opts)
	if err != nil {
		return err
	}
	qemuSpec, err := opts.QEMU.spec(opts.Sim)
	if err != nil {
		return invalid(err)
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	boards, err := startMCPBoards(ctx, ios, opts, qemuSpec, &cfg)
	defer boards()
	if err != nil {
		return err
	}
	srv, err := mcpserver.New(cfg)
	if err != nil {
		return invalid(err)
	}
	defer srv.Close()
	if opts.HTTP == "" {
		if err := srv.ServeStdio(ctx, ios.In, ios.Out); err != nil && ctx.Err() == nil {
			return infra(err)
		}
		return nil
	}
	h, err := srv.ListenHTTP(opts.HTTP, opts.Token, httpOpts...)
	if err != nil {
		if errors.Is(err, mcpserver.ErrRefused) {
			return invalid(err)
		}
		return infra(err)
	}
	if err := h.Serve(ctx); err != nil {
		return infra(err)
	}
	return nil
}

// mcpConfig is the server's configuration from the flags: its policy, its
// limits, the engine's bench made with the policy's environment, and its
// bench file with the --probe bindings.
func mcpConfig(ios *IO, opts *MCPOptions) (mcpserver.Config, error) {
	cfg := mcpserver.Config{
		Version: Version(),
		Wire:    engine.MCPWire,
		Policy: mcpserver.Policy{
			AllowPorts: opts.AllowPorts, DenyPorts: opts.DenyPorts, AllowProbes: opts.AllowProbes,
			ReadOnly: opts.ReadOnly, AllowExec: opts.AllowExec, AllowDebugTcl: opts.AllowDebugTcl,
			Roots: opts.Roots, PassEnv: opts.PassEnv, Env: environ.Host(),
		},
		LogDir:        opts.LogDir,
		Log:           ios.ErrOut,
		MaxRuns:       opts.MaxRuns,
		MaxRunAge:     opts.MaxRunAge,
		Heartbeat:     opts.Heartbeat,
		MaxValueBytes: opts.MaxValue,
		MaxExprWork:   opts.Expr.Work,
		MaxExprMemory: opts.Expr.Memory,
		MaxSteps:      opts.MaxSteps,
	}
	for _, r := range opts.AllowMemWrite {
		mr, err := mcpserver.ParseMemRange(r)
		if err != nil {
			return cfg, invalid(fmt.Errorf("--allow-mem-write: %w", err))
		}
		cfg.Policy.MemWrite = append(cfg.Policy.MemWrite, mr)
	}
	if opts.Bench != "" {
		b, err := steps.LoadBench(hostGates().Files, opts.Bench)
		if err != nil {
			var el steps.ErrorList
			if errors.As(err, &el) {
				return cfg, invalid(el)
			}
			return cfg, invalid(fmt.Errorf("read bench file: %w", err))
		}
		if opts.NoRecover {
			b.Ladder = nil
		}
		cfg.Bench = b
	}
	if err := mcpSecrets(&cfg, opts.Secrets); err != nil {
		return cfg, invalid(err)
	}
	if err := bindProbes(&cfg, &opts.Probes); err != nil {
		return cfg, invalid(err)
	}
	return cfg, nil
}

// startMCPBoards starts the --qemu board and the virtual board (--sim) and
// makes them what cfg binds when nothing else does. stop is never nil.
func startMCPBoards(ctx context.Context, ios *IO, opts *MCPOptions, qemuSpec *qemu.Spec, cfg *mcpserver.Config) (stop func(), err error) {
	var stops []func()
	stop = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if qemuSpec != nil {
		board, err := startQEMUBoard(ctx, ios.ErrOut, *qemuSpec, opts.LogDir, cfg.ServerGates())
		if err != nil {
			return stop, err
		}
		stops = append(stops, func() { board.Close(context.Background()) })
		cfg.DefaultPort = board.Instance().ConsolePath()
		cfg.DefaultGDB = board.Instance().GDBAddr()
		cfg.DefaultBoard = "QEMU " + qemuSpec.Machine
	}
	if opts.Sim {
		// The virtual board's OpenOCD starts under the server's gates,
		// which allow the server's own debugger servers.
		bench, err := startSimBench(ctx, sim.Options{}, true, cfg.ServerGates())
		if err != nil {
			return stop, infra(err)
		}
		stops = append(stops, func() { bench.Close() })
		if bench.note != "" {
			fmt.Fprintln(ios.ErrOut, "hilrun: "+bench.note)
		}
		cfg.DefaultPort = bench.board.SerialPath()
		cfg.DefaultOpenOCD = bench.probe
		cfg.DefaultBoard = sim.BannerTitle
		cfg.Camera, cfg.CameraFormat = bench.camera, cameraFormat
	}
	return stop, nil
}

// register adds hilrun mcp's flags to f.
func (opts *MCPOptions) register(f *pflag.FlagSet) {
	f.StringVar(&opts.HTTP, "http", "", "serve streamable HTTP at `HOST:PORT`/mcp instead of standard input and output")
	f.StringVar(&opts.Token, "token", "", "require this bearer `TOKEN` on HTTP requests (default $HILRUN_MCP_TOKEN)")
	f.StringArrayVar(&opts.AllowOrigins, "allow-origin", nil, "let browser pages of `ORIGIN` (like https://lab.example.com) use --http (repeatable; on loopback, pages on this machine are allowed anyway)")
	opts.MaxBody = int(mcpserver.DefaultMaxBody)
	f.Var(bytesFlag{&opts.MaxBody}, "max-body", "refuse HTTP request bodies above `BYTES` with 413 (like 16MiB; default 4MiB)")
	opts.MinBodyRate = mcpserver.DefaultMinBodyRate
	f.Var(rateFlag{bytesFlag{&opts.MinBodyRate}}, "min-body-rate", "cut off HTTP request bodies that arrive slower than `BYTES` a second after their first 10s, with 408 (like 4KiB; default 1KiB; 0 turns it off)")
	f.StringArrayVar(&opts.AllowPorts, "allow-port", nil, "only allow ports matching this path.Match `GLOB` (repeatable)")
	f.StringArrayVar(&opts.DenyPorts, "deny-port", nil, "refuse ports matching this path.Match `GLOB` (repeatable; wins over --allow-port)")
	f.StringArrayVar(&opts.AllowProbes, "allow-probe", nil, "let run_sequence's probes argument attach to debuggers at addresses matching this path.Match `GLOB`, like '127.0.0.1:4444' (repeatable; without it, only the server's own --bench, --sim and --qemu debuggers)")
	registerSecrets(f, &opts.Secrets)
	f.BoolVar(&opts.ReadOnly, "read-only", false, "refuse memory writes, uploads, debugger commands that could write, modem lines, power and exec; serial writes stay allowed")
	f.BoolVar(&opts.AllowExec, "allow-exec", false, "let exec steps and build and upload commands run host programs (with --root, inside it, without a shell, with a minimal environment)")
	f.BoolVar(&opts.AllowDebugTcl, "allow-debug-tcl", false, "let openocd: and monitor: steps send raw debugger commands (OpenOCD Tcl, GDB monitor), and probe launch configs name files under --root (Tcl can run host programs)")
	f.StringArrayVar(&opts.PassEnv, "pass-env", nil, "pass the server's environment variable `NAME` to host programs and launched OpenOCDs (repeatable), e.g. OPENOCD_SCRIPTS, IDF_PATH")
	f.StringArrayVar(&opts.AllowMemWrite, "allow-mem-write", nil, "only allow memory writes inside `RANGE`, START-END or START+SIZE (repeatable)")
	f.StringArrayVar(&opts.Roots, "root", nil, "let tools read files (sequences, ELF files) and run builds and uploads under `DIR` (repeatable)")
	f.StringVar(&opts.Bench, "bench", "", "bench `FILE` binding device and probe names to this bench's ports and OpenOCDs")
	registerRecover(f, &opts.NoRecover, "run the --bench file's health check before each sequence on its bench and climb its recovery ladder (health:, recover:) when the check fails or a call ended in a bench error; a bench that does not recover refuses calls until the server restarts")
	opts.Probes.registerProbes(f, false)
	f.BoolVar(&opts.Sim, "sim", false, "serve an in-process virtual board: devices and probes nothing else binds go to it")
	opts.QEMU.register(f)
	f.Uint64Var(&opts.MaxSteps, "max-steps", mcpserver.DefaultMaxSteps, "run at most `N` steps in one call, repeat iterations included")
	f.IntVar(&opts.MaxRuns, "max-runs", mcpserver.DefaultMaxRuns, "keep at most `N` runs (reports, logs, pictures) readable as resources")
	f.DurationVar(&opts.MaxRunAge, "max-run-age", mcpserver.DefaultMaxRunAge, "forget runs this long after they ended")
	f.DurationVar(&opts.Heartbeat, "heartbeat", mcpserver.DefaultHeartbeat, "while a step runs, send a call that has a progress token a progress notification at least this often")
	f.StringVar(&opts.LogDir, "log-dir", "", "keep console logs and run reports under `DIR` (default: a temporary folder removed on exit)")
	f.Var(bytesFlag{&opts.MaxValue}, "max-value", "the largest variable or saved value in a run, and text built from variables, in `BYTES` (like 4MiB; default 1MiB): a step past it ends its call with an error")
	opts.Expr.register(f)
}

// bindProbes adds the probes of --probe (--openocd NAME=ADDR, --gdb
// NAME=ADDR) to the server's bench, as if its bench file said {NAME:
// {openocd: ADDR}} or {NAME: {gdb: ADDR}}, keeping the file's elf.
func bindProbes(cfg *mcpserver.Config, b *BindFlags) error {
	openocdFlags, gdbFlags, err := b.probeFlags()
	if err != nil {
		return err
	}
	openocds, err := steps.ParseAssignments("openocd", openocdFlags)
	if err != nil {
		return err
	}
	gdbs, err := steps.ParseAssignments("gdb", gdbFlags)
	if err != nil || len(gdbs)+len(openocds) == 0 {
		return err
	}
	if cfg.Bench == nil {
		cfg.Bench = &steps.Bench{}
	}
	if cfg.Bench.Probes == nil {
		cfg.Bench.Probes = map[string]*steps.Probe{}
	}
	probe := func(name string) *steps.Probe {
		p := cfg.Bench.Probes[name]
		if p == nil {
			p = &steps.Probe{Name: name}
			cfg.Bench.Probes[name] = p
		}
		return p
	}
	for _, name := range steps.Names(openocds) {
		if _, twice := gdbs[name]; twice {
			return fmt.Errorf("probe %s is bound twice, to OpenOCD and to a GDB stub: give one", name)
		}
		probe(name).AttachOpenOCD(openocds[name])
	}
	for _, name := range steps.Names(gdbs) {
		addr, attach, err := steps.ParseGDBTarget(gdbs[name])
		if err != nil {
			return fmt.Errorf("--gdb %s=%s: %w", name, gdbs[name], err)
		}
		p := probe(name)
		p.AttachGDB(addr)
		if attach != "" {
			p.GDBAttach = attach
		}
	}
	return nil
}

// checkHTTPOptions refuses a weak token, origins that are not origins and
// a body limit below one byte before anything starts, and returns the
// options of ListenHTTP.
func checkHTTPOptions(opts *MCPOptions) ([]mcpserver.HTTPOption, error) {
	if opts.HTTP == "" {
		return nil, nil
	}
	if opts.Token != "" || opts.TokenFrom == "--token" {
		if err := mcpserver.CheckToken(opts.Token); err != nil {
			return nil, fmt.Errorf("%s: %w", opts.TokenFrom, err)
		}
	}
	for _, o := range opts.AllowOrigins {
		if _, err := mcpserver.ParseOrigin(o); err != nil {
			return nil, fmt.Errorf("--allow-origin: %w", err)
		}
	}
	return []mcpserver.HTTPOption{mcpserver.WithAllowOrigins(opts.AllowOrigins...), mcpserver.WithMaxBody(int64(opts.MaxBody)), mcpserver.WithMinBodyRate(int64(opts.MinBodyRate))}, nil
}

// mcpLong is hilrun mcp's help.
const mcpLong = `Serve hilrun's tools over MCP: serial_sequence runs a whole list of steps
with real timing between them; list_ports, serial_open, serial_write,
serial_read, serial_expect, serial_status, serial_close, mem_read, mem_write,
build, upload, task_status, run_sequence and validate_sequence are the
primitives. Console logs, build logs and run reports are resources
(hilrun://runs/{run_id}/report.json, ...).

Without --http it serves standard input and output: standard output carries
only JSON-RPC, every log line goes to standard error. With --http HOST:PORT it
serves streamable HTTP at /mcp on exactly that address, and fails when it is
taken. An address beyond loopback needs a bearer token (--token or
HILRUN_MCP_TOKEN); when a token is set every request must carry it.

Over HTTP: a token has at least 16 characters and no blanks, else hilrun
mcp exits 2. A request from a browser page whose Origin is not allowed gets
403; on loopback, pages on this machine (localhost, 127.0.0.1 or [::1],
any port) are allowed, others only with --allow-origin. On loopback, a Host
header other than localhost, 127.0.0.1 or [::1] gets 403 too (DNS
rebinding). A request other than initialize without an Mcp-Session-Id gets
400; an unknown or deleted session, 404.
HTTP limits: a request body above --max-body bytes (default 4194304, 4 MiB)
gets 413 and is not read; so does a body with more than 100000 JSON items
(objects, arrays and commas). The requests in flight hold at most 8 times
--max-body of bodies together, counted as bytes arrive (never on a declared
Content-Length); past that a request gets 503. A body that arrives slower
than --min-body-rate (default 1 KiB/s) after its first 10 seconds, or stops,
gets 408 and its connection is closed; any body gets 408 after 1 minute. A session ends after 30 minutes
without a request (its leases and locks end too); at most 1000 sessions
are kept, and past that initialize gets 503 until one ends.

Deny by default. With no flags a client may talk to serial consoles, read
target memory, halt, resume and reset the target, write memory through typed
steps and take pictures with the bench's cameras; it may not read files, run
host programs or send OpenOCD raw Tcl. Each step kind and tool says what it
can do, and a kind or tool the table does not describe is refused:
  --root DIR          read files under DIR (sequences, ELF files, images)
  --allow-exec        with --root: exec steps, build and upload commands and
                      PlatformIO run host programs inside a root, never
                      through a shell; --root limits where, not what
  --allow-debug-tcl   openocd: and monitor: steps send raw commands (OpenOCD
                      Tcl, a GDB stub's monitor commands), and probe launch
                      configs in a client's files name files under a root
                      (Tcl's exec makes this a shell); without it OpenOCD
                      gets only halt, resume, reset, wait_halt, md*, mw*,
                      read_memory, reg, targets, version and poll, written
                      again from the parsed numbers, and a GDB stub no
                      monitor command
  --read-only         refuses memory writes, flashing, modem lines, power,
                      host programs and raw Tcl, whatever else is on
Programs started for a client (exec, builds, uploads, launched OpenOCDs,
the virtual board's too) get only PATH, HOME, USER, LANG, LC_ALL, TZ,
TMPDIR and the --pass-env variables: never the token. Power commands and
cameras come from the --bench file (cameras also from --sim).

Limits (each ends that call with an error naming it; the server goes on):
  sequence files and inline steps: 4 MiB, YAML aliases adding at most
  100000 nodes and 4 MiB of text, numbers and durations in range, at most 100000000 steps
  with nested repeats multiplied; a value (variable, saved text) at most
  --max-value (1 MiB); an expression's evaluation at most --max-expr-work
  operations (1000000) and --max-expr-memory of lists and maps (16 MiB),
  stopping when its step ends; a call at most --max-steps steps (1000000); a
  result lists at most 1000 steps and 1 MiB of them (the rest are counted,
  the report resource has them all); runs kept as resources: --max-runs
  (50) for --max-run-age (24h).`

// Package engine is hilrun's composition root: the one place that wires
// its adapters (serial consoles, probe backends, build tools, cameras,
// host commands) into a runner.Bench. hilrun run, hilrun repl, hilrun mcp
// and the benchmarks get their bench here; library packages never import
// it (pkg/mcpserver takes the bench in its Config and wraps it).
package engine

import (
	"path/filepath"

	"github.com/hilrun/hilrun/pkg/elfsym"
	"github.com/hilrun/hilrun/pkg/gate"
	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/logfile"
	"github.com/hilrun/hilrun/pkg/redact"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// BenchConfig is what a command decides about the bench.
type BenchConfig struct {
	// LogDir receives console logs, debugger server logs and build logs;
	// "" keeps none.
	LogDir string
	// ConsoleLogDir, when not "", receives the console logs instead of
	// LogDir; HideLogs names none of them in results (they are in a
	// private folder no report names).
	ConsoleLogDir string
	HideLogs      bool
	// Warn receives warnings that do not stop the run; nil drops them.
	Warn func(msg string)
	// Gates are the policies of every effect the bench has: programs
	// started for the run (builds, host commands, launched debugger
	// servers, QEMU, ffmpeg) and their environment, devices opened,
	// addresses dialled, and what ${env.NAME} sees (Gates.Env). The zero
	// Policy allows none of them: the command line passes
	// gate.Permissive(environ.Host()), the MCP server its own.
	Gates gate.Policy
	// ForClients makes the bench of an MCP server: ${env.NAME} and env in
	// expressions are empty, so what a client sends cannot read the
	// server's environment, and its check opens no file a sequence names
	// (the server's policy resolves those first): it refuses only steps a
	// probe's backend cannot run.
	ForClients bool
	// Secrets are the run's secrets: the consoles mask them in what they
	// receive and log, and ${env.NAME} and env in expressions do not see
	// a variable that holds one. nil has none.
	Secrets *redact.Set
	// Launched says the QEMUs that probes launch are started already (a
	// REPL session starts them once): the bench starts none of its own.
	Launched bool
}

// NewBench is the bench hilrun runs on, the one place one is made: QEMUs
// that probes launch started first, consoles opened as serial ports,
// probes through their backends, symbols from ELF files, builds and host
// commands as processes, pictures through ffmpeg.
func NewBench(c BenchConfig) runner.Bench {
	g := c.Gates
	consoleLogs := c.LogDir
	if c.ConsoleLogDir != "" {
		consoleLogs = c.ConsoleLogDir
	}
	b := runner.Bench{
		Open:         OpenConsole(ConsoleOptions{LogDir: consoleLogs, Warn: c.Warn, Gates: g, Secrets: c.Secrets}),
		OpenProbe:    OpenProbe(ProbeOptions{LogDir: c.LogDir, Gates: g}),
		Symbols:      elfsym.Lookup(g.Files),
		Build:        Builder(BuildLogs(c.LogDir), nil, g.Procs),
		Camera:       Camera(g.Procs),
		Host:         process.Runner{Policy: g.Procs},
		OpenLog:      openLog,
		LogPaths:     LogPath,
		Check:        Check,
		ParseCommand: ParseCommand,
		Environ:      withoutSecrets(g.Env.List(), c.Secrets),
	}
	if c.HideLogs {
		b.LogPaths = nil
	}
	if c.ForClients {
		b.Environ, b.Check = nil, CheckRaw
	}
	if !c.Launched {
		b.Prepare = prepareQEMU(QEMUOptions{LogDir: c.LogDir, Procs: g.Procs}, c.Warn)
	}
	return b
}

// openLog opens a host command's log, counting what a full disk loses.
func openLog(what, path string) (runner.Log, error) {
	f, err := logfile.Append(what, path)
	if err != nil {
		return nil, err
	}
	return hostLog{f}, nil
}

// hostLog is a logfile.File as the runner takes it.
type hostLog struct{ *logfile.File }

// Loss is nil when nothing was lost: never a typed nil.
func (l hostLog) Loss() error {
	if e := l.File.Loss(); e != nil {
		return e
	}
	return nil
}

// BuildLogs names the log file of each build or upload step's tool under
// logDir (KIND-lineN.log); nil when logDir is "".
func BuildLogs(logDir string) func(*steps.Step) string {
	if logDir == "" {
		return nil
	}
	return func(s *steps.Step) string {
		return filepath.Join(logDir, runner.BuildLogName(s))
	}
}

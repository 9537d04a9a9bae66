// Package engine is hilrun's composition root: the one place that wires
// its adapters (serial consoles, probe backends, build tools, cameras,
// host commands) into the runner. hilrun run, hilrun repl, hilrun mcp and
// the benchmarks build their runner.Options, consoles and probes here;
// library packages never import it (pkg/mcpserver takes what it needs as
// functions in its Config).
package engine

import (
	"context"
	"fmt"
	"github.com/hilrun/hilrun/pkg/elfsym"
	"path/filepath"

	"github.com/hilrun/hilrun/pkg/build"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// RunConfig is what a command decides about a run; Options turns it into
// runner.Options.
type RunConfig struct {
	// LogDir receives console logs, debugger server logs and build logs;
	// "" keeps none.
	LogDir string
	// Warn receives warnings that do not stop the run; nil drops them.
	Warn func(msg string)
	// Environ is the whole environment of programs started for the run
	// (builds, host commands, launched debugger servers); nil means
	// hilrun's own.
	Environ []string
	// ArtifactDir, Vars, Sink, FinallyContext, MaxValueBytes, MaxExprWork
	// and MaxExprMemory go to runner.Options as they are.
	ArtifactDir    string
	Vars           map[string]string
	Sink           runner.Sink
	FinallyContext context.Context
	MaxValueBytes  int
	MaxExprWork    int
	MaxExprMemory  int
}

// Options are the runner options of a run on this bench: QEMUs that
// probes launch started first, consoles opened as serial ports, probes
// through their backends, symbols from ELF files,
// builds and host commands as processes, pictures through ffmpeg.
func Options(c RunConfig) runner.Options {
	return runner.Options{
		Open:           OpenConsole(ConsoleOptions{LogDir: c.LogDir, Warn: c.Warn}),
		OpenProbe:      OpenProbe(ProbeOptions{LogDir: c.LogDir, Environ: c.Environ}),
		Symbols:        Symbols,
		Build:          Builder(BuildLogs(c.LogDir), nil, c.Environ),
		Camera:         Camera(),
		Host:           build.ExecRunner{Environ: c.Environ},
		ArtifactDir:    c.ArtifactDir,
		Vars:           c.Vars,
		Sink:           c.Sink,
		FinallyContext: c.FinallyContext,
		MaxValueBytes:  c.MaxValueBytes,
		MaxExprWork:    c.MaxExprWork,
		MaxExprMemory:  c.MaxExprMemory,
		LogPaths:       LogPath,
		Prepare:        prepareQEMU(QEMUOptions{LogDir: c.LogDir}, c.Warn),
	}
}

// Symbols looks symbols up in ELF files.
var Symbols runner.SymbolLookup = elfsym.LookupSymbol

// BuildLogs names the log file of each build or upload step's tool under
// logDir (KIND-lineN.log); nil when logDir is "".
func BuildLogs(logDir string) func(*steps.Step) string {
	if logDir == "" {
		return nil
	}
	return func(s *steps.Step) string {
		return filepath.Join(logDir, fmt.Sprintf("%s-line%d.log", s.Kind, s.Pos.Line))
	}
}

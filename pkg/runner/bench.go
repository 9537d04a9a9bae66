package runner

import (
	"context"
	"io"

	"github.com/hilrun/hilrun/pkg/steps"
)

// Bench is what a run runs on: how it opens consoles and probes, runs
// builds, cameras and host programs, finds symbols, names its logs, and
// what environment ${env.NAME} sees. hilrun builds one in one place
// (internal/engine); a caller that needs something different wraps it
// with the With methods, which return a changed copy and leave the
// original as it was.
type Bench struct {
	// Open opens consoles. Required when the sequence has serial steps.
	Open Opener
	// OpenProbe opens debugger sessions. Required when the sequence has
	// memory or debugger steps.
	OpenProbe ProbeOpener
	// Symbols resolves ELF symbols for steps that address memory by name.
	Symbols SymbolLookup
	// Build runs the tools of build and upload steps.
	Build Builder
	// Camera takes the pictures of camera steps.
	Camera CameraGrabber
	// Host runs the commands of exec and power steps.
	Host HostRunner
	// OpenLog opens (for appending, creating it when needed) the log file
	// of a host command's output in the run's artifact folder; what says
	// what it is in errors ("exec log"). nil keeps no such logs.
	OpenLog func(what, path string) (Log, error)
	// LogPaths, if set, reports the log file of each console once opened.
	LogPaths func(c Console) string
	// Prepare, if set, runs before any console or probe opens, under the
	// run's context: it starts what the sequence launches for itself (a
	// QEMU board) and returns seq bound to it, a copy when it binds
	// anything. release, when not nil, runs once the consoles and probes
	// are closed, whatever the outcome, even a panic. An error ends the run
	// as a bench error, as a console that does not open does.
	Prepare func(ctx context.Context, seq *steps.Sequence) (bound *steps.Sequence, release func(), err error)
	// Check refuses, before anything opens, what this bench cannot run:
	// a step its probe's backend does not take, a symbol or image that is
	// not there. nil checks nothing.
	Check func(seq *steps.Sequence) error
	// ParseCommand reads the raw commands of the bench's Tcl debuggers
	// (OpenOCD) as typed ones, for a policy that sends only those (the MCP
	// server's); nil reads none.
	ParseCommand CommandParser
	// Environ is the environment ${env.NAME} and env in expressions see,
	// as KEY=value lines; nil is an empty one (what MCP clients get, so a
	// sequence cannot read the server's secrets).
	Environ []string
}

// Log is a log file a bench opens for the runner. Its writes never fail:
// what could not be written is counted, and Loss says so once it is
// closed, for the run to report.
type Log interface {
	io.Writer
	Close()
	Loss() error
}

// WithOpen returns a copy of b whose consoles open through wrap(b.Open):
// a console borrowed from a session, a console held across REPL lines.
func (b Bench) WithOpen(wrap func(next Opener) Opener) Bench {
	b.Open = wrap(b.Open)
	return b
}

// WithOpenProbe returns a copy of b whose probes open through
// wrap(b.OpenProbe): a session kept across calls, a policy guard.
func (b Bench) WithOpenProbe(wrap func(next ProbeOpener) ProbeOpener) Bench {
	b.OpenProbe = wrap(b.OpenProbe)
	return b
}

// WithBuild returns a copy of b whose builds run through wrap(b.Build).
func (b Bench) WithBuild(wrap func(next Builder) Builder) Bench {
	b.Build = wrap(b.Build)
	return b
}

// WithCamera returns a copy of b whose pictures are taken through
// wrap(b.Camera).
func (b Bench) WithCamera(wrap func(next CameraGrabber) CameraGrabber) Bench {
	b.Camera = wrap(b.Camera)
	return b
}

// WithoutLogPaths returns a copy of b that names no console logs, for
// consoles whose logs the caller keeps itself.
func (b Bench) WithoutLogPaths() Bench {
	b.LogPaths = nil
	return b
}

// getenv is ${env.NAME}: the value of name in the bench's environment, ""
// when it has none.
func (r *run) getenv(name string) string {
	return r.exprEnviron()[name]
}

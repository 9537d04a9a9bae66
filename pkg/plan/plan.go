// Package plan binds a loaded sequence to a bench and runs it. A Plan is
// what will run: the sequence with every device, probe, camera and power
// entry bound, the variables from the command line or the request, and
// the run's limits. Bind is the one way to make one, for hilrun run,
// repl, validate, pools and shards, and for the MCP server; once made, a
// plan never changes, so a policy can read it and what it read is what
// runs.
package plan

import (
	"context"
	"maps"

	"github.com/hilrun/hilrun/pkg/redact"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// Limits bound a run: each variable's size and each expression's work and
// memory, and the steps it executes (see runner.Options for units and what
// 0 means).
type Limits struct {
	MaxValueBytes int
	MaxExprWork   int
	MaxExprMemory int
	MaxSteps      uint64
}

// Sources are where a plan's bindings come from, applied in this order:
// the bench file, then ports, OpenOCD and GDB addresses by name (from
// flags or a request's arguments), then Camera for every camera nothing
// gave an input (the virtual board's, under --sim).
type Sources struct {
	Bench    *steps.Bench
	Ports    map[string]string
	OpenOCDs map[string]string
	GDBs     map[string]string
	// Camera and CameraFormat, when Camera is set, are the input every
	// camera reads (see steps.BindCameras).
	Camera, CameraFormat string
	// Vars are values given for the run (--var); they override the file's.
	Vars   map[string]string
	Limits Limits
	// Retries are the retries of a sequence whose file does not say
	// retries: (hilrun run --retries, the serial_sequence tool's
	// retries).
	Retries int
	// Secrets give the values of the sequence's secrets: (read from the
	// environment or files by the command); each must be there.
	Secrets *redact.Set
}

// Plan is a sequence bound to a bench, with its variables and limits. It
// is made by Bind and never changed: its methods return copies.
type Plan struct {
	seq     *steps.Sequence
	vars    map[string]string
	limits  Limits
	retries int
	secrets *redact.Set
}

// Bind binds seq to src and returns the plan. seq itself is never
// changed, so one loaded sequence binds to many benches. It is an error
// to bind a device or probe that seq does not have (a *steps.BindError).
func Bind(seq *steps.Sequence, src Sources) (*Plan, error) {
	bound, err := steps.Bind(seq, steps.Binding{Bench: src.Bench, Ports: src.Ports, OpenOCDs: src.OpenOCDs, GDBs: src.GDBs})
	if err != nil {
		return nil, err
	}
	if src.Camera != "" {
		bound = steps.BindCameras(bound, src.Camera, src.CameraFormat)
	}
	if err := checkSecrets(seq, src); err != nil {
		return nil, err
	}
	return &Plan{seq: bound, vars: maps.Clone(src.Vars), limits: src.Limits, retries: src.Retries, secrets: src.Secrets}, nil
}

// Secrets are the plan's secrets, for the bench its consoles open on.
func (p *Plan) Secrets() *redact.Set { return p.secrets }

// Sequence is the bound sequence. It is the plan's own: a caller that
// needs it changed (a QEMU reserved, the virtual board's addresses filled
// in) uses Rebind, which works on a copy.
func (p *Plan) Sequence() *steps.Sequence { return p.seq }

// Vars are the plan's variables from the command line or request; the
// map is a copy.
func (p *Plan) Vars() map[string]string { return maps.Clone(p.vars) }

// Limits are the plan's limits.
func (p *Plan) Limits() Limits { return p.limits }

// WithRetries returns a plan like p whose sequence, unless its file says
// retries:, runs again up to n times after an attempt that did not pass
// (hilrun run --retries); p stays as it was.
func (p *Plan) WithRetries(n int) *Plan {
	np := *p
	np.retries = n
	return &np
}

// Retries is how many times the sequence runs again after an attempt
// that did not pass: its own retries:, else the plan's.
func (p *Plan) Retries() int {
	if r := p.seq.Retry; r != nil && r.Set {
		return r.Count
	}
	return p.retries
}

// Rebind returns a new plan whose sequence is f applied to a copy of this
// plan's sequence: its bindings (steps.CloneBindings) and its step tree,
// down to the specs that hold paths and ports; p stays as it was. f
// returns the sequence to keep, or an error.
func (p *Plan) Rebind(f func(seq *steps.Sequence) (*steps.Sequence, error)) (*Plan, error) {
	c := steps.CloneBindings(p.seq)
	cloneSteps(c)
	seq, err := f(c)
	if err != nil {
		return nil, err
	}
	np := *p
	np.seq = seq
	return &np, nil
}

// Check makes the checks a run makes before it opens a port: power steps
// with their entries, then the bench's own (bench.Check: probes its
// backends can open, symbols and images that exist).
func (p *Plan) Check(bench runner.Bench) error {
	if err := steps.CheckPower(p.seq); err != nil {
		return err
	}
	if bench.Check != nil {
		return bench.Check(p.seq)
	}
	return nil
}

// Output is where a run's results go and what it keeps.
type Output struct {
	// Sink receives the event stream; nil discards it.
	Sink runner.Sink
	// ArtifactDir receives pictures and host command output.
	ArtifactDir string
	// FinallyContext bounds the finally steps (see runner.Options).
	FinallyContext context.Context
	// KeepSteps keeps every step's result in the result (short runs).
	KeepSteps bool
	// TranscriptLimit bounds each console transcript; 0 means 256 KiB.
	TranscriptLimit int
}

// Run runs the plan on bench, its results to out.
func (p *Plan) Run(ctx context.Context, bench runner.Bench, out Output) *runner.SequenceResult {
	return runner.Run(ctx, p.seq, bench, runner.Options{
		Vars:            maps.Clone(p.vars),
		Sink:            out.Sink,
		FinallyContext:  out.FinallyContext,
		TranscriptLimit: out.TranscriptLimit,
		ArtifactDir:     out.ArtifactDir,
		MaxValueBytes:   p.limits.MaxValueBytes,
		MaxExprWork:     p.limits.MaxExprWork,
		MaxExprMemory:   p.limits.MaxExprMemory,
		MaxSteps:        p.limits.MaxSteps,
		KeepSteps:       out.KeepSteps,
		Retries:         p.retries,
		Secrets:         p.secrets,
	})
}

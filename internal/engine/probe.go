package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/hilrun/hilrun/pkg/elfsym"
	"github.com/hilrun/hilrun/pkg/gate/files"

	"github.com/hilrun/hilrun/pkg/gate"
	"github.com/hilrun/hilrun/pkg/openocd"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// Backend is one way to reach a debug probe: the probes whose spec is of
// kind Name (steps.Probe.Backend) open through it. Adding a backend is its
// package, one line in probeBackends, and its spec in pkg/steps and the
// schemas.
type Backend struct {
	// Name is the probe spec kind it opens: steps.BackendOpenOCD, ...
	Name string
	// Open opens one persistent session of probe p. A nil Debugger with a
	// nil error is not allowed.
	Open func(ctx context.Context, p *steps.Probe, o ProbeOptions) (runner.Debugger, error)
	// Raw says its sessions run raw commands (runner.RawCommander), so
	// monitor steps run on it.
	Raw bool
	// Tcl says its raw commands are OpenOCD Tcl, so openocd steps run on
	// it (and the MCP policy may parse them).
	Tcl bool
}

// probeBackends are the probe backends of this build, one line each.
var probeBackends = []Backend{
	{Name: steps.BackendOpenOCD, Open: openOpenOCD, Raw: true, Tcl: true},
	{Name: steps.BackendGDB, Open: openGDB, Raw: true},
}

// ProbeOptions are what the command opening probes decides for them.
type ProbeOptions struct {
	// LogDir receives the log of a debugger server launched for a probe
	// (openocd-NAME.log); "" keeps none.
	LogDir string
	// Gates are the policies a probe's debugger is reached through
	// (Dial, Devices) and a debugger server launched for it starts under
	// (Procs, whose environment is the server's).
	Gates gate.Policy
	// Dir is the folder a launched debugger server works in; "" means
	// hilrun's own.
	Dir string
}

// Backends lists the probe backends of this build.
func Backends() []Backend { return append([]Backend(nil), probeBackends...) }

// LookupBackend returns the backend that opens probes of spec kind name.
func LookupBackend(name string) (Backend, bool) { return lookupBackend(probeBackends, name) }

func lookupBackend(backends []Backend, name string) (Backend, bool) {
	for _, b := range backends {
		if b.Name == name {
			return b, true
		}
	}
	return Backend{}, false
}

// OpenProbe opens each probe through its backend: one persistent session
// for the whole run.
func OpenProbe(o ProbeOptions) runner.ProbeOpener { return openProbe(probeBackends, o) }

func openProbe(backends []Backend, o ProbeOptions) runner.ProbeOpener {
	return func(ctx context.Context, p *steps.Probe) (runner.Debugger, error) {
		b, ok := lookupBackend(backends, p.Backend())
		if !ok {
			return nil, fmt.Errorf("no backend of this build opens it (%s)", describeSpec(p))
		}
		d, err := b.Open(ctx, p, o)
		if err != nil {
			return nil, err
		}
		if d == nil {
			return nil, fmt.Errorf("the %s backend opened no session", b.Name)
		}
		return d, nil
	}
}

// ProbeDialer opens probes through their backends under gates, a
// debugger server launched for a probe working in dir: the MCP server's
// way (mcpserver.Config.DialProbe).
func ProbeDialer(gates gate.Policy) func(ctx context.Context, p *steps.Probe, dir string) (runner.Debugger, error) {
	return func(ctx context.Context, p *steps.Probe, dir string) (runner.Debugger, error) {
		return OpenProbe(ProbeOptions{Gates: gates, Dir: dir})(ctx, p)
	}
}

func describeSpec(p *steps.Probe) string {
	if b := p.Backend(); b != "" {
		return "a " + b + " probe"
	}
	return "nothing binds it"
}

// openOpenOCD opens an OpenOCD session: attached to a running OpenOCD, or
// to one launched for the probe and stopped with the session.
func openOpenOCD(ctx context.Context, p *steps.Probe, o ProbeOptions) (runner.Debugger, error) {
	launch := LaunchConfig(p)
	if launch != nil {
		launch.Procs, launch.Dial = o.Gates.Procs, o.Gates.Dial
		if o.LogDir != "" {
			launch.LogFile = filepath.Join(o.LogDir, "openocd-"+p.Name+".log")
		}
		if o.Dir != "" {
			if err := os.MkdirAll(o.Dir, 0o700); err != nil {
				return nil, fmt.Errorf("make a folder for OpenOCD: %w", err)
			}
			launch.Dir = o.Dir
		}
	}
	s, err := openocd.Open(ctx, p.OpenOCD, launch, o.Gates.Dial)
	if err != nil {
		return nil, err
	}
	return s, nil
}

// LaunchConfig is how to start OpenOCD for p, or nil when p attaches to a
// running one (or is not an OpenOCD probe).
func LaunchConfig(p *steps.Probe) *openocd.LaunchConfig {
	if p.OpenOCD != "" || p.Launch == nil || p.GDB != "" || p.LaunchesQEMU() {
		return nil
	}
	return &openocd.LaunchConfig{
		Binary:        p.Launch.Binary,
		Configs:       p.Launch.Config,
		Commands:      p.Launch.Commands,
		AdapterSerial: p.Launch.AdapterSerial,
		Args:          p.Launch.Args,
	}
}

// CheckProbes makes sure, before anything is opened, that every probe of
// seq is bound to a backend of this build, that every step's probe can do
// what the step needs (openocd steps need OpenOCD, monitor steps raw
// commands), and that every symbol the steps name exists. The errors name
// FILE:LINE:COL.
func CheckProbes(seq *steps.Sequence) error {
	var errs steps.ErrorList
	for _, p := range seq.Probes {
		switch {
		case p.Backend() == "":
			errs = append(errs, &steps.Error{Pos: p.Pos, Msg: fmt.Sprintf("probe %s is not bound: give it openocd: HOST:PORT, launch: {config: [...]}, gdb: HOST:PORT or launch: {qemu: {...}} in the sequence or %s, pass --openocd %s=HOST:PORT or --gdb %s=HOST:PORT, or use --sim or --qemu FILE", p.Name, steps.BenchFile, p.Name, p.Name)})
		case p.LaunchesQEMU():
			errs = append(errs, checkQEMU(seq, p)...)
		case p.Backend() == steps.BackendOpenOCD && p.OpenOCD == "" && len(p.Launch.Config) == 0:
			errs = append(errs, &steps.Error{Pos: p.Pos, Msg: fmt.Sprintf("probe %s: launch needs config files (config: [interface/stlink.cfg, target/stm32f4x.cfg]) in the sequence or the bench file", p.Name)})
		}
	}
	var el steps.ErrorList
	if err := CheckRaw(seq); errors.As(err, &el) {
		errs = append(errs, el...)
	}
	steps.Walk(seq, func(s *steps.Step) {
		if s.Mem == nil || s.Mem.Symbol == "" {
			return
		}
		elf := s.Mem.ELF
		if elf == "" {
			if p := seq.Probe(s.To); p != nil {
				elf = p.ELF
			}
		}
		if elf == "" {
			errs = append(errs, &steps.Error{Pos: s.Pos, Msg: fmt.Sprintf("symbol %s needs an ELF file: set elf: on the step or on probe %s", s.Mem.Symbol, s.To)})
			return
		}
		if _, _, err := elfsym.Lookup(files.Anywhere())(elf, s.Mem.Symbol); err != nil {
			errs = append(errs, &steps.Error{Pos: s.Pos, Msg: err.Error(), Missing: missing(elf, err)})
		}
	})
	if len(errs) > 0 {
		return errs
	}
	return nil
}

// CheckRaw refuses, as a steps.ErrorList, the steps that need raw commands
// their probe's backend does not take: an openocd step on a probe that is
// not OpenOCD, a monitor step on a backend without raw commands. Probes
// not bound yet are left alone.
func CheckRaw(seq *steps.Sequence) error { return checkRaw(seq, probeBackends) }

func checkRaw(seq *steps.Sequence, backends []Backend) error {
	var errs steps.ErrorList
	steps.Walk(seq, func(s *steps.Step) {
		k, ok := steps.LookupKind(s.Kind)
		if !ok || k.Raw == steps.RawNone {
			return
		}
		p := seq.Probe(s.To)
		if p == nil || p.Backend() == "" {
			return
		}
		b, ok := lookupBackend(backends, p.Backend())
		switch {
		case !ok:
			errs = append(errs, &steps.Error{Pos: s.Pos, Msg: fmt.Sprintf("probe %s: no backend of this build opens %s", p.Name, describeSpec(p))})
		case k.Raw == steps.RawTcl && !b.Tcl && b.Raw:
			errs = append(errs, &steps.Error{Pos: s.Pos, Msg: fmt.Sprintf("an openocd step sends OpenOCD Tcl, and probe %s is a %s probe, not OpenOCD: use a monitor step for its own raw commands, or typed steps (mem_read, mem_write, halt, resume, reset)", p.Name, b.Name)})
		case k.Raw == steps.RawTcl && !b.Tcl:
			errs = append(errs, &steps.Error{Pos: s.Pos, Msg: fmt.Sprintf("an openocd step sends OpenOCD Tcl, and probe %s is a %s probe, not OpenOCD: use typed steps (mem_read, mem_write, halt, resume, reset)", p.Name, b.Name)})
		case !b.Raw:
			errs = append(errs, &steps.Error{Pos: s.Pos, Msg: fmt.Sprintf("a %s step sends a raw command, and probe %s (%s) takes none: use typed steps (mem_read, mem_write, halt, resume, reset)", s.Kind, p.Name, b.Name)})
		}
	})
	if len(errs) > 0 {
		return errs
	}
	return nil
}

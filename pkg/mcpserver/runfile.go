package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/steps"
)

type runArgs struct {
	Path          string            `json:"path"`
	Vars          map[string]any    `json:"vars"`
	Ports         map[string]string `json:"ports"`
	Probes        map[string]string `json:"probes"`
	LockTimeoutMS *int64            `json:"lock_timeout_ms"`
}

// stringVars are run_sequence's variables as hilrun run --var gives them:
// text, whatever their JSON type.
func stringVars(m map[string]any) map[string]string {
	out := map[string]string{}
	for k, v := range m {
		switch x := v.(type) {
		case string:
			out[k] = x
		case nil:
			out[k] = ""
		default:
			out[k] = fmt.Sprint(x)
		}
	}
	return out
}

func (s *Server) runSequence(ctx context.Context, req mcp.CallToolRequest, a *runArgs) (any, string, error) {
	if a.Path == "" {
		return nil, "", errors.New("path is required: a sequence file under a --root")
	}
	real, err := s.cfg.Policy.ResolveFile(a.Path)
	if err != nil {
		return nil, "", err
	}
	vars := stringVars(a.Vars)
	seq, err := steps.Load(s.cfg.Gates.Files, real, steps.LoadOptions{Vars: steps.Names(vars)})
	if err != nil {
		return nil, "", err
	}
	if err := s.checkFileProbes(seq.Probes); err != nil {
		return nil, "", err
	}
	if err := s.checkClientCameras(seq.Cameras, nil); err != nil {
		return nil, "", err
	}
	bench := s.cfg.Bench
	if bench == nil {
		if bench, err = s.benchBeside(real); err != nil {
			return nil, "", err
		}
	}
	if err := s.checkRunBindings(a); err != nil {
		return nil, "", err
	}
	// The server's own bench brings its health check and ladder; a bench
	// file beside the sequence brings none (its steps are a client's).
	own := bench != nil && bench == s.cfg.Bench
	return s.execute(ctx, req, seq, execOptions{vars: vars, bound: true, sources: plan.Sources{Bench: bench, Ports: a.Ports, OpenOCDs: a.Probes}, lockWait: lockWait(a.LockTimeoutMS), ladder: own})
}

// benchBeside is the bench file beside the sequence file seq
// (hilrun.bench.yaml), or nil when there is none. It is a file under a
// root like the sequence, not the operator's --bench: the same rules apply
// to its probes and cameras.
func (s *Server) benchBeside(seq string) (*steps.Bench, error) {
	p := filepath.Join(filepath.Dir(seq), steps.BenchFile)
	if _, err := os.Lstat(p); err != nil {
		return nil, nil
	}
	// Read as the sequence was: a link that leads out of the roots is
	// refused before a byte of its target is read.
	rp, err := s.cfg.Policy.ResolveFile(p)
	if err != nil {
		return nil, err
	}
	bench, err := steps.LoadBench(s.cfg.Gates.Files, rp)
	if err != nil {
		return nil, err
	}
	var probes []*steps.Probe
	for _, name := range slices.Sorted(maps.Keys(bench.Probes)) {
		probes = append(probes, bench.Probes[name])
	}
	if err := s.checkFileProbes(probes); err != nil {
		return nil, err
	}
	var cams []*steps.Camera
	for _, name := range slices.Sorted(maps.Keys(bench.Cameras)) {
		cams = append(cams, bench.Cameras[name])
	}
	if err := s.checkClientCameras(cams, nil); err != nil {
		return nil, err
	}
	return bench, nil
}

// checkRunBindings applies the policy to run_sequence's ports and probes.
func (s *Server) checkRunBindings(a *runArgs) error {
	for _, port := range a.Ports {
		if err := s.checkPort(port); err != nil {
			return err
		}
	}
	if len(a.Probes) > 0 && s.cfg.Policy.ReadOnly {
		return refused("probes: a read-only server does not attach to OpenOCDs it was not given")
	}
	for _, name := range slices.Sorted(maps.Keys(a.Probes)) {
		addr := a.Probes[name]
		if err := s.cfg.Policy.CheckProbeAddr(addr, s.ownProbeAddr(addr)); err != nil {
			return fmt.Errorf("probes: %s: %w", name, err)
		}
	}
	return nil
}

// ownProbeAddr reports whether the server itself binds a probe to the
// debugger at addr: its --sim or --qemu, or a probe of its --bench file.
func (s *Server) ownProbeAddr(addr string) bool {
	if addr == "" {
		return false
	}
	if addr == s.cfg.DefaultOpenOCD || addr == s.cfg.DefaultGDB {
		return true
	}
	if s.cfg.Bench != nil {
		for _, p := range s.cfg.Bench.Probes {
			if p != nil && (p.OpenOCD == addr || p.GDB == addr) {
				return true
			}
		}
	}
	return false
}

// checkFileProbes refuses what a file under a root (a sequence, or a bench
// file beside it) may not say about its probes when a client runs it:
// which program to launch and its extra arguments and commands belong in
// the operator's --bench file. Probe ELF files must lie under a root.
func (s *Server) checkFileProbes(probes []*steps.Probe) error {
	for _, p := range probes {
		if p.LaunchesQEMU() {
			return refused("%s: probe %s: launch: {qemu: ...} starts a program on the host, which a client's file may not: start hilrun mcp with --qemu FILE, or with --bench naming the probe's gdb: HOST:PORT", p.Pos, p.Name)
		}
		if l := p.Launch; l != nil && (l.Binary != "" || len(l.Args) > 0 || len(l.Commands) > 0) {
			return refused("%s: probe %s: launch binary, args and commands are only taken from the server's --bench file", p.Pos, p.Name)
		}
		if l := p.Launch; l != nil {
			// OpenOCD runs a configuration file as Tcl: only its own
			// scripts, or with raw Tcl allowed files under a root.
			for i, c := range l.Config {
				real, err := s.cfg.Policy.CheckLaunchConfig(c, filepath.Dir(p.Pos.File))
				if err != nil {
					return fmt.Errorf("%s: probe %s: %w", p.Pos, p.Name, err)
				}
				l.Config[i] = real
			}
			if strings.ContainsFunc(l.AdapterSerial, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
				return refused("%s: probe %s: adapter_serial %q holds control characters", p.Pos, p.Name, l.AdapterSerial)
			}
		}
		if p.ELF != "" {
			real, err := s.cfg.Policy.ResolveFile(p.ELF)
			if err != nil {
				return fmt.Errorf("%s: probe %s: %w", p.Pos, p.Name, err)
			}
			p.ELF = real
		}
	}
	return nil
}

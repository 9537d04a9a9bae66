package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// dialProbe opens a probe's debugger session through Config.DialProbe:
// attached to a running debugger server, or to one launched for it that
// outlives the call (the session is pooled). A launched server gets the
// policy's minimal environment, so no secret of the server's reaches its
// Tcl, and works in an empty folder of the server's, so a relative
// configuration name finds only OpenOCD's own scripts.
func (s *Server) dialProbe(ctx context.Context, p *steps.Probe) (runner.Debugger, error) {
	if p.Backend() == "" {
		return nil, fmt.Errorf("probe %s is bound to no debugger", p.Name)
	}
	if s.cfg.DialProbe == nil {
		return nil, fmt.Errorf("probe %s: this server opens no probes (it was started without a probe dialer)", p.Name)
	}
	return s.cfg.DialProbe(ctx, p, filepath.Join(s.logDir, "openocd"))
}

// pooledProbe is one persistent debugger session per probe binding, shared
// by the memory tools and by sequences (which hold the probe's lock while
// they use it).
type pooledProbe struct {
	key string
	mu  sync.Mutex
	d   runner.Debugger
}

func (p *pooledProbe) close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.d != nil {
		p.d.Close()
		p.d = nil
	}
}

// probeBinding is where a probe's debugger is: the key identifies it for
// the pool and the lock.
func probeBinding(p *steps.Probe) string {
	if p.GDB != "" {
		return "gdb " + p.GDB
	}
	if p.OpenOCD != "" {
		return "openocd " + p.OpenOCD
	}
	if p.Launch != nil {
		return "launch " + strings.Join(p.Launch.Config, ",") + " " + p.Launch.AdapterSerial
	}
	return ""
}

// session returns the pooled session of probe p, opening it when needed.
// Its errors do not name the probe: the caller does.
func (s *Server) session(ctx context.Context, p *steps.Probe) (runner.Debugger, error) {
	// Every probe the server opens passes here: nothing reaches an
	// address or a device the policy refuses, whichever path bound it.
	if err := s.checkProbeTarget(p); err != nil {
		return nil, err
	}
	key := probeBinding(p)
	s.mu.Lock()
	if s.closed {
		// Close has taken the pool: a session opened now would never be
		// closed (and a launched OpenOCD would outlive the server).
		s.mu.Unlock()
		return nil, errors.New("the server is shutting down")
	}
	pp := s.probes[key]
	if pp == nil {
		pp = &pooledProbe{key: key}
		s.probes[key] = pp
	}
	s.mu.Unlock()
	pp.mu.Lock()
	defer pp.mu.Unlock()
	if pp.d != nil {
		return pp.d, nil
	}
	d, err := s.cfg.OpenProbe(ctx, p)
	if err != nil {
		return nil, err
	}
	pp.d = d
	return d, nil
}

// dropSession closes the pooled session of p after the bench broke, so the
// next use opens a fresh one.
func (s *Server) dropSession(p *steps.Probe) {
	s.mu.Lock()
	pp := s.probes[probeBinding(p)]
	s.mu.Unlock()
	if pp != nil {
		pp.close()
	}
}

// bindProbe gives p an OpenOCD from the bench or the virtual board when the
// sequence did not.
func (s *Server) bindProbe(p *steps.Probe) error {
	if p.OpenOCD != "" || p.GDB != "" || (p.Launch != nil && len(p.Launch.Config) > 0) || p.LaunchesQEMU() {
		return nil
	}
	if s.cfg.DefaultGDB != "" {
		p.AttachGDB(s.cfg.DefaultGDB)
		return nil
	}
	if s.cfg.DefaultOpenOCD != "" {
		p.OpenOCD, p.Launch = s.cfg.DefaultOpenOCD, nil
		return nil
	}
	return fmt.Errorf("probe %s has no OpenOCD: start hilrun mcp with --bench FILE binding it (probes: {%s: {openocd: HOST:PORT}}), or with --sim%s", p.Name, p.Name, s.probeNames())
}

func (s *Server) probeNames() string {
	if s.cfg.Bench == nil || len(s.cfg.Bench.Probes) == 0 {
		return ""
	}
	var names []string
	for n := range s.cfg.Bench.Probes {
		names = append(names, n)
	}
	sort.Strings(names)
	return "; the bench has probes " + strings.Join(names, ", ")
}

// resolveProbe finds the probe a memory tool names: one of the bench, or,
// under --sim, the virtual board's whatever the name. An empty name means
// the only probe there is.
func (s *Server) resolveProbe(name string) (*steps.Probe, error) {
	var bench map[string]*steps.Probe
	if s.cfg.Bench != nil {
		bench = s.cfg.Bench.Probes
	}
	if name == "" && len(bench) == 1 {
		for n := range bench {
			name = n
		}
	}
	if b, ok := bench[name]; ok {
		p := *b
		if p.Launch != nil {
			l := *p.Launch
			p.Launch = &l
		}
		if err := s.bindProbe(&p); err != nil {
			return nil, err
		}
		return &p, nil
	}
	if s.cfg.DefaultGDB != "" || s.cfg.DefaultOpenOCD != "" {
		if name == "" {
			name = steps.DefaultProbe
		}
		p := &steps.Probe{Name: name}
		s.bindProbe(p)
		return p, nil
	}
	if name == "" {
		return nil, fmt.Errorf("no probe is configured: start hilrun mcp with --bench FILE naming probes, or with --sim")
	}
	return nil, fmt.Errorf("unknown probe %q%s", name, s.probeNames())
}

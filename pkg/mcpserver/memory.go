package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/openocd"
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

// guarded is a pooled session as a sequence sees it: the server's memory
// policy applies, and closing it leaves the session open for the next user.
// It has no Unwrap on purpose: it guards the session's optional abilities
// (raw commands, images) by implementing them itself, and an Unwrap would
// let the runner reach them unchecked.
// benchFault says err means the probe's session broke (whatever its
// backend: its errors say BenchFault), so the next user opens a new one.
func benchFault(err error) bool {
	var bf interface{ BenchFault() bool }
	return errors.Is(err, openocd.ErrUnavailable) || errors.As(err, &bf) && bf.BenchFault()
}

type guarded struct {
	d      runner.Debugger
	policy *Policy
	// broke, when set, hears of every error that says the session broke.
	broke func()
	// tcl is true when the session's raw commands are OpenOCD Tcl, which
	// the policy parses; any other backend's raw commands need
	// --allow-debug-tcl.
	tcl bool
}

// seen passes err on, telling broke when it says the session broke.
func (g *guarded) seen(err error) error {
	if err != nil && g.broke != nil && benchFault(err) {
		g.broke()
	}
	return err
}

func (g *guarded) ReadMemory(ctx context.Context, addr uint64, width, count int) ([]uint64, error) {
	v, err := g.d.ReadMemory(ctx, addr, width, count)
	return v, g.seen(err)
}

func (g *guarded) WriteMemory(ctx context.Context, addr uint64, width int, values []uint64) error {
	if err := g.policy.CheckMemWrite(addr, uint64(width/8*len(values))); err != nil {
		return err
	}
	return g.seen(g.d.WriteMemory(ctx, addr, width, values))
}

func (g *guarded) Halt(ctx context.Context) error   { return g.seen(g.d.Halt(ctx)) }
func (g *guarded) Resume(ctx context.Context) error { return g.seen(g.d.Resume(ctx)) }

func (g *guarded) Reset(ctx context.Context, mode string) error {
	return g.seen(g.d.Reset(ctx, mode))
}

// LastAccessHalted passes on whether the session stopped a running target
// for its last memory access.
func (g *guarded) LastAccessHalted() bool {
	a, ok := runner.DebuggerAs[runner.AccessReporter](g.d)
	return ok && a.LastAccessHalted()
}

// Command sends a raw command the policy allows: on OpenOCD a typed
// command written again from its parsed numbers, or any Tcl with
// --allow-debug-tcl; on any other backend only with --allow-debug-tcl.
func (g *guarded) Command(ctx context.Context, cmd string) (string, error) {
	rc, ok := runner.DebuggerAs[runner.RawCommander](g.d)
	if !ok {
		return "", fmt.Errorf("debugger command %q: this probe takes no raw commands", cmd)
	}
	send := cmd
	if g.tcl {
		var err error
		if send, err = g.policy.CheckCommand(cmd); err != nil {
			return "", err
		}
	} else if err := g.policy.Allow(fmt.Sprintf("debugger command %q", cmd), steps.CapDebugRaw); err != nil {
		return "", err
	}
	out, err := rc.Command(ctx, send)
	return out, g.seen(err)
}

func (g *guarded) Close() error { return nil }

// checkImage applies the policy to writing the image at path into the
// target, and returns its real path under a root: an image may write
// anywhere, so a read-only server, or one that limits memory writes,
// refuses it.
func (g *guarded) checkImage(what, path string) (string, error) {
	if err := g.policy.Allow(what+" "+path, steps.CapMemWrite|steps.CapReadFiles); err != nil {
		return "", err
	}
	if len(g.policy.MemWrite) > 0 {
		return "", refused("%s %s: memory writes are limited by --allow-mem-write, and an image could write anywhere", what, path)
	}
	return g.policy.ResolveFile(path)
}

// LoadImage writes an image into target RAM.
func (g *guarded) LoadImage(ctx context.Context, path string, offset uint64) (string, error) {
	real, err := g.checkImage("load", path)
	if err != nil {
		return "", err
	}
	w, ok := runner.DebuggerAs[runner.ImageLoader](g.d)
	if !ok {
		return "", fmt.Errorf("load %s: this probe cannot load images", path)
	}
	out, err := w.LoadImage(ctx, real, offset)
	return out, g.seen(err)
}

// VerifyImage compares an image file under a root with target memory.
func (g *guarded) VerifyImage(ctx context.Context, path string, offset uint64) error {
	if err := g.policy.Allow("verify "+path, steps.CapReadFiles); err != nil {
		return err
	}
	real, err := g.policy.ResolveFile(path)
	if err != nil {
		return err
	}
	w, ok := runner.DebuggerAs[runner.ImageLoader](g.d)
	if !ok {
		return fmt.Errorf("verify %s: this probe cannot verify images", path)
	}
	return g.seen(w.VerifyImage(ctx, real, offset))
}

// Program writes an image into the target's flash.
func (g *guarded) Program(ctx context.Context, path string, verify, reset bool, offset uint64) (string, error) {
	real, err := g.checkImage("program", path)
	if err != nil {
		return "", err
	}
	w, ok := runner.DebuggerAs[runner.Programmer](g.d)
	if !ok {
		return "", fmt.Errorf("program %s: this probe cannot program images", path)
	}
	out, err := w.Program(ctx, real, verify, reset, offset)
	return out, g.seen(err)
}

// --- mem_read / mem_write ---

type memArgs struct {
	Probe         string          `json:"probe"`
	Address       json.RawMessage `json:"address"`
	Symbol        string          `json:"symbol"`
	ELF           string          `json:"elf"`
	ELFPath       string          `json:"elf_path"`
	Offset        int64           `json:"offset"`
	Width         int             `json:"width"`
	Count         int             `json:"count"`
	Value         json.RawMessage `json:"value"`
	Values        json.RawMessage `json:"values"`
	Verify        bool            `json:"verify"`
	LockTimeoutMS *int64          `json:"lock_timeout_ms"`
}

type memResult struct {
	Probe    string   `json:"probe"`
	Address  string   `json:"address"`
	Symbol   string   `json:"symbol,omitempty"`
	Width    int      `json:"width"`
	Count    int      `json:"count"`
	Values   []uint64 `json:"values"`
	Hex      []string `json:"hex"`
	Verified bool     `json:"verified,omitempty"`
}

// parseNumber reads a JSON number or a string holding one ("0x40", "64").
func parseNumber(raw json.RawMessage, what string) (uint64, error) {
	t := strings.TrimSpace(string(raw))
	if strings.HasPrefix(t, `"`) {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return 0, fmt.Errorf("%s: %v", what, err)
		}
		t = strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	}
	if v, err := strconv.ParseUint(t, 0, 64); err == nil {
		return v, nil
	}
	if v, err := strconv.ParseInt(t, 0, 64); err == nil {
		return uint64(v), nil
	}
	return 0, fmt.Errorf("%s %s: want a number such as 0x48000014 or 32", what, t)
}

// target resolves the address, width and count of a memory tool call.
func (s *Server) memTarget(a *memArgs) (addr uint64, width, count int, err error) {
	width, count = a.Width, a.Count
	switch {
	case a.Symbol != "" && len(a.Address) > 0:
		return 0, 0, 0, errors.New("give address or symbol, not both")
	case a.Symbol != "":
		elf := first(a.ELF, a.ELFPath)
		if elf == "" {
			return 0, 0, 0, fmt.Errorf("symbol %s needs elf: the path of an ELF file under a --root", a.Symbol)
		}
		real, err := s.cfg.Policy.ResolveFile(elf)
		if err != nil {
			return 0, 0, 0, err
		}
		base, size, err := s.cfg.Engine.Symbols(real, a.Symbol)
		if err != nil {
			return 0, 0, 0, err
		}
		addr = uint64(int64(base) + a.Offset)
		if width == 0 {
			switch size {
			case 1, 2, 4, 8:
				width = int(size) * 8
			}
		}
	case len(a.Address) > 0:
		if addr, err = parseNumber(a.Address, "address"); err != nil {
			return 0, 0, 0, err
		}
		addr = uint64(int64(addr) + a.Offset)
	default:
		return 0, 0, 0, errors.New("address or symbol (with elf) is required")
	}
	if width == 0 {
		width = 32
	}
	if width != 8 && width != 16 && width != 32 && width != 64 {
		return 0, 0, 0, fmt.Errorf("width %d: want 8, 16, 32 or 64", width)
	}
	if count <= 0 {
		count = 1
	}
	return addr, width, count, nil
}

func hexValues(vs []uint64, width int) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprintf("0x%0*x", width/4, v)
	}
	return out
}

func (s *Server) memRead(ctx context.Context, req mcp.CallToolRequest, a *memArgs) (any, string, error) {
	if len(a.Value) > 0 || len(a.Values) > 0 || a.Verify {
		return nil, "", errors.New("mem_read takes no value, values or verify: use mem_write")
	}
	addr, width, count, err := s.memTarget(a)
	if err != nil {
		return nil, "", err
	}
	var vs []uint64
	p, err := s.withProbe(ctx, req, a, func(d runner.Debugger) (err error) {
		vs, err = d.ReadMemory(ctx, addr, width, count)
		return err
	})
	if err != nil {
		return nil, "", err
	}
	out := memResult{Probe: p.Name, Address: fmt.Sprintf("0x%08x", addr), Symbol: a.Symbol, Width: width, Count: len(vs), Values: vs, Hex: hexValues(vs, width)}
	if out.Values == nil {
		out.Values = []uint64{}
	}
	return out, fmt.Sprintf("%s: %s", out.Address, strings.Join(out.Hex, " ")), nil
}

func (s *Server) memWrite(ctx context.Context, req mcp.CallToolRequest, a *memArgs) (any, string, error) {
	if s.cfg.Policy.ReadOnly {
		return nil, "", refused("mem_write: the server is read-only (--read-only)")
	}
	var values []uint64
	switch {
	case len(a.Value) > 0 && len(a.Values) > 0:
		return nil, "", errors.New("give value or values, not both")
	case len(a.Value) > 0:
		v, err := parseNumber(a.Value, "value")
		if err != nil {
			return nil, "", err
		}
		values = []uint64{v}
	case len(a.Values) > 0:
		var raws []json.RawMessage
		if err := json.Unmarshal(a.Values, &raws); err != nil {
			return nil, "", fmt.Errorf("values: want a list of numbers: %v", err)
		}
		for i, r := range raws {
			v, err := parseNumber(r, fmt.Sprintf("values[%d]", i))
			if err != nil {
				return nil, "", err
			}
			values = append(values, v)
		}
		if len(values) == 0 {
			return nil, "", errors.New("values is empty: give at least one value")
		}
	default:
		return nil, "", errors.New("value (or values) is required")
	}
	if a.Count != 0 {
		return nil, "", errors.New("mem_write takes no count: the values say how many")
	}
	addr, width, _, err := s.memTarget(a)
	if err != nil {
		return nil, "", err
	}
	for i, v := range values {
		if width < 64 && v>>width != 0 {
			return nil, "", fmt.Errorf("value %d (0x%x) does not fit in %d bits", i, v, width)
		}
	}
	if err := s.cfg.Policy.CheckMemWrite(addr, uint64(width/8*len(values))); err != nil {
		return nil, "", err
	}
	var got []uint64
	p, err := s.withProbe(ctx, req, a, func(d runner.Debugger) error {
		if err := d.WriteMemory(ctx, addr, width, values); err != nil {
			return err
		}
		if !a.Verify {
			return nil
		}
		var err error
		if got, err = d.ReadMemory(ctx, addr, width, len(values)); err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, "", err
	}
	out := memResult{Probe: p.Name, Address: fmt.Sprintf("0x%08x", addr), Symbol: a.Symbol, Width: width, Count: len(values), Values: values, Hex: hexValues(values, width)}
	text := fmt.Sprintf("wrote %s at %s", strings.Join(out.Hex, " "), out.Address)
	if a.Verify {
		for i := range values {
			if i >= len(got) || got[i] != values[i] {
				return nil, "", fmt.Errorf("verify at %s: wrote %s, read back %s", out.Address, strings.Join(out.Hex, " "), strings.Join(hexValues(got, width), " "))
			}
		}
		out.Verified = true
		text += ", verified"
	}
	return out, text, nil
}

// withProbe resolves the call's probe, holds its lock and runs fn on its
// pooled session; a session the bench broke is dropped, so the next call
// opens a new one.
func (s *Server) withProbe(ctx context.Context, req mcp.CallToolRequest, a *memArgs, fn func(d runner.Debugger) error) (*steps.Probe, error) {
	p, err := s.resolveProbe(a.Probe)
	if err != nil {
		return nil, err
	}
	release, err := s.locks.acquire(ctx, []string{probeKey(probeBinding(p))}, who(ctx, req), lockWait(a.LockTimeoutMS))
	if err != nil {
		return nil, err
	}
	defer release()
	d, err := s.session(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("probe %s: %w", p.Name, err)
	}
	if err := fn(d); err != nil {
		// A session the bench broke is dropped.
		if benchFault(err) {
			s.dropSession(p)
		}
		return nil, err
	}
	return p, nil
}

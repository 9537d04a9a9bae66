package mcpserver

import (
	"errors"
	"fmt"
	"os"

	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/runner"

	"github.com/hilrun/hilrun/pkg/steps"
)

// ErrRefused is wrapped by every error that a policy of the server (port
// globs, read-only, memory ranges, roots) caused.
var ErrRefused = errors.New("refused by the server's policy")

// refused returns an error wrapping ErrRefused that says what and why.
func refused(format string, args ...any) error {
	return fmt.Errorf("%s: %w", fmt.Sprintf(format, args...), ErrRefused)
}

// MemRange is an inclusive range of target addresses that memory writes may
// touch.
type MemRange struct {
	Start, End uint64
}

func (r MemRange) String() string { return fmt.Sprintf("0x%08x-0x%08x", r.Start, r.End) }

// ParseMemRange reads a range written START-END (both inclusive) or
// START+SIZE, numbers in hex (0x...), octal (0o...) or decimal:
// "0x20000000-0x2000ffff", "0x48000000+0x400".
func ParseMemRange(s string) (MemRange, error) {
	bad := func(why string) (MemRange, error) {
		return MemRange{}, fmt.Errorf("memory range %q: %s (want START-END or START+SIZE, like 0x20000000-0x2000ffff or 0x48000000+0x400)", s, why)
	}
	t := strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	if a, b, ok := strings.Cut(t, "+"); ok {
		start, err1 := strconv.ParseUint(strings.TrimSpace(a), 0, 64)
		size, err2 := strconv.ParseUint(strings.TrimSpace(b), 0, 64)
		if err1 != nil || err2 != nil {
			return bad("not a number")
		}
		if size == 0 {
			return bad("the size is 0")
		}
		if start+size-1 < start {
			return bad("the range passes the end of the address space")
		}
		return MemRange{Start: start, End: start + size - 1}, nil
	}
	if a, b, ok := strings.Cut(t, "-"); ok {
		start, err1 := strconv.ParseUint(strings.TrimSpace(a), 0, 64)
		end, err2 := strconv.ParseUint(strings.TrimSpace(b), 0, 64)
		if err1 != nil || err2 != nil {
			return bad("not a number")
		}
		if end < start {
			return bad("the end is before the start")
		}
		return MemRange{Start: start, End: end}, nil
	}
	return bad("no - or +")
}

// Policy is what the server lets its callers do. What a step or a tool
// may do is its capabilities (steps.Cap): Allow says which of them this
// policy allows, and everything it does not name is refused.
type Policy struct {
	// AllowPorts and DenyPorts are path.Match globs over port paths
	// ("/dev/ttyACM*", "/dev/serial/by-id/*"). A port matching a deny glob
	// is refused; when any allow glob is given, only ports matching one are
	// allowed. A port is matched by the path given and by the path its
	// symbolic links lead to.
	AllowPorts, DenyPorts []string
	// AllowProbes are path.Match globs over the debugger addresses
	// ("127.0.0.1:4444", "tcl://lab-pi:6666") a run_sequence call may
	// bind probes to with its probes argument. Without a match a call may
	// name only the addresses the server's own bench file, --sim or
	// --qemu bind: an address could reach any host, and the server would
	// speak OpenOCD's protocol to whatever listens there.
	AllowProbes []string
	// ReadOnly refuses everything that changes the target or the host:
	// memory writes, uploads and image loads, modem lines, power, host
	// programs and raw debugger commands, whatever other fields allow.
	// Serial writes stay allowed: a console is how a test talks to the
	// device. Halting, resuming and resetting through the probe stay
	// allowed: reading memory often needs them.
	ReadOnly bool
	// AllowExec lets steps and tools run host programs: exec steps, build
	// and upload commands, PlatformIO. They run only inside a root,
	// without a shell, with a minimal environment.
	AllowExec bool
	// AllowDebugTcl lets openocd: steps send OpenOCD any Tcl, and probe
	// launch configurations name configuration files under a root. Both
	// can run host programs (Tcl's exec). Off, OpenOCD sees only commands
	// hilrun wrote itself from parsed numbers.
	AllowDebugTcl bool
	// MemWrite, when not empty, lists the only address ranges memory
	// writes may touch.
	MemWrite []MemRange
	// Roots are the only folders whose files tools may read (sequence
	// files, ELF files, images to upload) and the only folders host
	// programs may run in. Empty means no file may be read and no program
	// run.
	Roots []string
	// PassEnv names variables of the server's environment that host
	// programs and launched OpenOCDs get besides the minimal ones
	// (OPENOCD_SCRIPTS, IDF_PATH, PLATFORMIO_CORE_DIR).
	PassEnv []string
	// Env is the server's own environment, which Environ picks the
	// minimal variables and PassEnv's from; the zero Env has none (hilrun
	// mcp passes its own, environ.Host).
	Env environ.Env
}

// Allow returns nil when the policy allows every capability of c, and
// otherwise an error wrapping ErrRefused that says which flag would allow
// it. what names the step or tool in the error.
func (p *Policy) Allow(what string, c steps.Cap) error {
	for _, one := range steps.Caps() {
		if c&one == 0 {
			continue
		}
		if why := p.refusal(one); why != "" {
			return refused("%s: %s", what, why)
		}
	}
	return nil
}

// refusal says why the policy refuses capability c, or "".
func (p *Policy) refusal(c steps.Cap) string {
	switch c {
	case steps.CapDevice, steps.CapCamera, steps.CapMemRead, steps.CapProbeControl:
		return ""
	case steps.CapModemLines:
		if p.ReadOnly {
			return "the server is read-only (--read-only), and modem lines and breaks can reset the board"
		}
		return ""
	case steps.CapPower, steps.CapMemWrite:
		if p.ReadOnly {
			return "the server is read-only (--read-only)"
		}
		return ""
	case steps.CapReadFiles:
		if len(p.Roots) == 0 {
			return "no --root folder was given, so no file may be read; start hilrun mcp with --root DIR"
		}
		return ""
	case steps.CapHostExec:
		switch {
		case p.ReadOnly:
			return "host programs are off on a read-only server (--read-only)"
		case !p.AllowExec:
			return "host programs (exec, build and upload commands) are off on this server; start hilrun mcp with --allow-exec and --root DIR"
		case len(p.Roots) == 0:
			return "host programs run only inside a --root folder, and this server has none; start hilrun mcp with --root DIR"
		}
		return ""
	case steps.CapDebugRaw:
		switch {
		case p.ReadOnly:
			return "raw debugger commands and configuration files are off on a read-only server (--read-only)"
		case !p.AllowDebugTcl:
			return "raw debugger commands and configuration files are off on this server (OpenOCD's Tcl can run host programs); use a typed step (mem_read, mem_write, halt, resume, reset) or start hilrun mcp with --allow-debug-tcl"
		}
		return ""
	}
	return fmt.Sprintf("capability %s is not described, so it is refused", c)
}

// Validate checks the globs and roots, and resolves the roots.
func (p *Policy) Validate() error {
	for _, g := range append(append([]string(nil), p.AllowPorts...), p.DenyPorts...) {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("port glob %q: %w", g, err)
		}
	}
	for _, g := range p.AllowProbes {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("probe glob %q: %w", g, err)
		}
	}
	for i, r := range p.Roots {
		abs, err := filepath.Abs(r)
		if err != nil {
			return fmt.Errorf("root %s: %w", r, err)
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return fmt.Errorf("root %s: %w", r, err)
		}
		fi, err := os.Stat(real)
		if err != nil {
			return fmt.Errorf("root %s: %w", r, err)
		}
		if !fi.IsDir() {
			return fmt.Errorf("root %s is not a folder", r)
		}
		p.Roots[i] = real
	}
	return nil
}

func matchAny(globs []string, names ...string) string {
	for _, g := range globs {
		for _, n := range names {
			if ok, _ := path.Match(g, n); ok {
				return g
			}
		}
	}
	return ""
}

// CheckPort returns nil when callers may use the port at p. Globs match
// the port as given, its canonical spelling (steps.CanonicalPort: an
// absolute, clean device path; a URL in lower case with a plain port
// number) and, for a device, the path its links lead to, so no other
// spelling gets past a --deny-port. A network console (tcp://,
// rfc2217://) needs an --allow-port glob that names it: it could reach any
// host, OpenOCD's Tcl server or a GDB stub, which run host commands.
func (p *Policy) CheckPort(port string) error { return p.checkPort(port, false) }

// CheckTrustedPort is CheckPort for a port the server's own bench file
// names: a network console there needs no --allow-port, --deny-port still
// applies.
func (p *Policy) CheckTrustedPort(port string) error { return p.checkPort(port, true) }

func (p *Policy) checkPort(port string, trusted bool) error {
	canon, err := steps.CanonicalPort(port)
	if err != nil {
		return refused("%v", err)
	}
	names := []string{port, canon}
	network := steps.NetworkPort(canon)
	if !network {
		if real, err := filepath.EvalSymlinks(canon); err == nil && real != canon {
			names = append(names, real)
		}
	}
	if g := matchAny(p.DenyPorts, names...); g != "" {
		return refused("port %s matches --deny-port %s", port, g)
	}
	allowed := len(p.AllowPorts) > 0 && matchAny(p.AllowPorts, names...) != ""
	switch {
	case network && !trusted && !allowed:
		return refused("port %s is a network console: this server opens one only where an --allow-port glob names it, such as --allow-port '%s' (a network console can reach any host, and OpenOCD's Tcl server or a GDB stub run host commands)", port, canon)
	case len(p.AllowPorts) > 0 && !allowed && !(network && trusted):
		return refused("port %s matches no --allow-port glob (%s)", port, strings.Join(p.AllowPorts, ", "))
	}
	return nil
}

// CheckProbeAddr returns nil when a caller may bind a probe to the
// debugger at addr: one the server itself binds (trusted), or one an
// AllowProbes glob names, as given or in lower case.
func (p *Policy) CheckProbeAddr(addr string, trusted bool) error {
	if trusted || matchAny(p.AllowProbes, addr, strings.ToLower(addr)) != "" {
		return nil
	}
	return refused("probe address %s: this server attaches only to the debuggers its --bench file, --sim or --qemu give, or where an --allow-probe glob names the address, such as --allow-probe '%s' (an address can reach any host)", addr, addr)
}

// CheckMemWrite returns nil when a write of n bytes at addr is allowed.
func (p *Policy) CheckMemWrite(addr, n uint64) error {
	if p.ReadOnly {
		return refused("memory write at 0x%08x: the server is read-only (--read-only)", addr)
	}
	if len(p.MemWrite) == 0 {
		return nil
	}
	if n == 0 {
		n = 1
	}
	end := addr + n - 1
	for _, r := range p.MemWrite {
		if addr >= r.Start && end <= r.End && end >= addr {
			return nil
		}
	}
	var rs []string
	for _, r := range p.MemWrite {
		rs = append(rs, r.String())
	}
	return refused("memory write at 0x%08x-0x%08x is outside the ranges --allow-mem-write allows (%s)", addr, end, strings.Join(rs, ", "))
}

// CheckCommand returns the debugger command to send for cmd, or an error
// wrapping ErrRefused. A server that allows raw Tcl (and is not read-only)
// sends cmd as it is. Any other sends only typed commands: cmd must parse
// as one (parse, the bench's runner.Bench.ParseCommand; nil parses none),
// and what is sent is written again from the numbers parsed, so nothing of
// cmd reaches Tcl as text. Memory writes are checked like mem_write's.
func (p *Policy) CheckCommand(parse runner.CommandParser, cmd string) (string, error) {
	if p.AllowDebugTcl && !p.ReadOnly {
		return cmd, nil
	}
	if parse == nil {
		return "", refused("debugger command %q: this bench reads no typed debugger commands; %s", cmd, p.refusal(steps.CapDebugRaw))
	}
	t, err := parse(cmd)
	if err != nil {
		return "", refused("debugger command %q: %v; %s", cmd, err, p.refusal(steps.CapDebugRaw))
	}
	if err := p.Allow(fmt.Sprintf("debugger command %q", cmd), commandCaps(t)); err != nil {
		return "", err
	}
	if addr, n, ok := t.Writes(); ok {
		if err := p.CheckMemWrite(addr, n); err != nil {
			return "", err
		}
	} else if t.Effect() == runner.CommandWrite && len(p.MemWrite) > 0 {
		return "", refused("debugger command %q: memory writes are limited by --allow-mem-write, and register writes are outside every range", cmd)
	}
	return t.String(), nil
}

// commandCaps is what a typed debugger command can do.
func commandCaps(t runner.TypedCommand) steps.Cap {
	switch t.Effect() {
	case runner.CommandWrite:
		return steps.CapMemWrite
	case runner.CommandControl:
		return steps.CapProbeControl
	}
	return steps.CapMemRead
}

// openocdScript matches the relative name of one of OpenOCD's own scripts,
// found through its search path: interface/stlink.cfg.
var openocdScript = regexp.MustCompile(`^[A-Za-z0-9_+-][A-Za-z0-9_.+-]*(/[A-Za-z0-9_+-][A-Za-z0-9_.+-]*)*$`)

// CheckLaunchConfig returns the configuration file a probe launched for a
// client's sequence may pass OpenOCD: one of OpenOCD's own scripts by
// relative name (no "..", no ./), or, with raw Tcl allowed, the real path
// of a file under a root, which base resolves when relative.
func (p *Policy) CheckLaunchConfig(cfg, base string) (string, error) {
	// No part of such a name starts with a dot, so it cannot be ./ or
	// ../; ".." anywhere is refused all the same.
	if openocdScript.MatchString(cfg) && !strings.Contains(cfg, "..") {
		return cfg, nil
	}
	if err := p.Allow("launch config "+cfg, steps.CapDebugRaw|steps.CapReadFiles); err != nil {
		return "", err
	}
	return p.resolveIn("launch config "+cfg, cfg, base)
}

// Environ is the environment of the programs the server starts for a
// client (host commands, builds, uploads, OpenOCD): enough to find programs
// and run them, and the variables of PassEnv, read from the server's
// environment; none of the server's secrets (such as HILRUN_MCP_TOKEN)
// unless PassEnv names them.
func (p *Policy) Environ() []string { return p.environ(p.Env.Lookup) }

func (p *Policy) environ(lookup func(string) (string, bool)) []string {
	// Not nil even when none is set: nil would mean the server's own.
	env := []string{}
	for _, k := range append([]string{"PATH", "HOME", "USER", "LANG", "LC_ALL", "TZ", "TMPDIR"}, p.PassEnv...) {
		if v, ok := lookup(k); ok && !slices.ContainsFunc(env, func(e string) bool { return strings.HasPrefix(e, k+"=") }) {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// ResolveFile returns the real path of file when it lies inside a root.
// Relative paths are taken relative to the first root. ".." that climbs out
// of a root and symbolic links that lead out of one are refused.
func (p *Policy) ResolveFile(file string) (string, error) {
	if len(p.Roots) == 0 {
		return "", refused("read %s: no --root folder was given, so no file may be read", file)
	}
	if file == "" {
		return "", errors.New("empty file path")
	}
	return p.resolveIn("read "+file, file, p.Roots[0])
}

// ResolveDir returns the real path of the folder dir when it lies inside a
// root: the working folder of a build. "" means base, and a relative dir is
// taken relative to base. what names the argument in errors ("dir",
// "pio.project_dir").
func (p *Policy) ResolveDir(what, dir, base string) (string, error) {
	if len(p.Roots) == 0 {
		return "", refused("%s %s: no --root folder was given", what, dir)
	}
	if dir == "" {
		dir = base
	}
	label := what + " " + dir
	real, err := p.resolveIn(label, dir, base)
	if err != nil {
		return "", err
	}
	if fi, err := os.Stat(real); err != nil {
		return "", fmt.Errorf("%s: %w", label, err)
	} else if !fi.IsDir() {
		return "", fmt.Errorf("%s: not a folder", label)
	}
	return real, nil
}

// CheckOutput returns nil when the file a build makes (which may not exist
// yet) lies inside a root.
func (p *Policy) CheckOutput(what, file string) error {
	clean := filepath.Clean(file)
	if real, err := filepath.EvalSymlinks(clean); err == nil {
		clean = real
	}
	if !p.inRoot(clean) {
		return refused("%s %s: outside the --root folders (%s)", what, file, strings.Join(p.Roots, ", "))
	}
	return nil
}

// resolveIn is ResolveFile with relative paths taken relative to base and
// label at the start of errors.
func (p *Policy) resolveIn(label, file, base string) (string, error) {
	abs := file
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(base, file)
	}
	abs = filepath.Clean(abs)
	if !p.inRoot(abs) {
		// The lexical path may still lead into a root through a symlink
		// (a root given as /tmp, which is /private/tmp on macOS).
		real, err := filepath.EvalSymlinks(abs)
		if err != nil || !p.inRoot(real) {
			return "", refused("%s: outside the --root folders (%s)", label, strings.Join(p.Roots, ", "))
		}
	}
	real, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", fmt.Errorf("%s: %w", label, err)
	}
	if !p.inRoot(real) {
		return "", refused("%s: it leads to %s, outside the --root folders (%s)", label, real, strings.Join(p.Roots, ", "))
	}
	return real, nil
}

func (p *Policy) inRoot(f string) bool {
	for _, r := range p.Roots {
		rel, err := filepath.Rel(r, f)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

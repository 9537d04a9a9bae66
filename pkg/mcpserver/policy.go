package mcpserver

import (
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
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

// Policy is what the server lets its callers do.
type Policy struct {
	// AllowPorts and DenyPorts are path.Match globs over port paths
	// ("/dev/ttyACM*", "/dev/serial/by-id/*"). A port matching a deny glob
	// is refused; when any allow glob is given, only ports matching one are
	// allowed. A port is matched by the path given and by the path its
	// symbolic links lead to.
	AllowPorts, DenyPorts []string
	// ReadOnly refuses memory writes (mem_write, memory-writing steps),
	// uploads (upload steps, the upload tool), debugger commands that
	// could change the target other than halt, resume and reset, modem
	// line steps (lines, break, reset_sequence), power and exec. Serial writes stay allowed: a console is how a test talks to the
	// device. Builds stay allowed: they change files under a root, not
	// the target.
	ReadOnly bool
	// AllowExec lets exec steps run host commands (inside a root, without
	// a shell, with a minimal environment). Off, they are refused.
	AllowExec bool
	// MemWrite, when not empty, lists the only address ranges memory
	// writes may touch.
	MemWrite []MemRange
	// Roots are the only folders whose files tools may read (sequence
	// files, ELF files, images to upload) and the only folders builds and
	// uploads may run in. Empty means no file may be read and no build or
	// upload may run.
	Roots []string
}

// Validate checks the globs and roots, and resolves the roots.
func (p *Policy) Validate() error {
	for _, g := range append(append([]string(nil), p.AllowPorts...), p.DenyPorts...) {
		if _, err := path.Match(g, ""); err != nil {
			return fmt.Errorf("port glob %q: %w", g, err)
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

// CheckPort returns nil when callers may use the port at p.
func (p *Policy) CheckPort(port string) error {
	names := []string{port}
	if real, err := filepath.EvalSymlinks(port); err == nil && real != port {
		names = append(names, real)
	}
	if g := matchAny(p.DenyPorts, names...); g != "" {
		return refused("port %s matches --deny-port %s", port, g)
	}
	if len(p.AllowPorts) > 0 && matchAny(p.AllowPorts, names...) == "" {
		return refused("port %s matches no --allow-port glob (%s)", port, strings.Join(p.AllowPorts, ", "))
	}
	return nil
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

// safeCommands are the debugger commands a read-only server, or one that
// limits memory writes, still runs: they cannot write target memory.
var safeCommands = map[string]bool{
	"halt": true, "resume": true, "reset": true, "mdb": true, "mdh": true, "mdw": true, "mdd": true,
	"read_memory": true, "targets": true, "version": true, "echo": true, "poll": true, "wait_halt": true,
}

// tclSpecial are the characters with which one Tcl script line runs more
// than one command: separators, command substitution, and the backslash
// that could spell either.
const tclSpecial = ";[]\\\n\r"

// CheckCommand returns nil when the debugger command cmd is allowed.
func (p *Policy) CheckCommand(cmd string) error {
	if !p.ReadOnly && len(p.MemWrite) == 0 {
		return nil
	}
	why := "the server is read-only (--read-only)"
	if !p.ReadOnly {
		why = "memory writes are limited by --allow-mem-write, and this command could write anywhere"
	}
	// OpenOCD evaluates a command as a Tcl script: "mdw 0; mww 0 1" and
	// "mdw [mww 0 1]" run a second command behind an allowed first word.
	if i := strings.IndexAny(cmd, tclSpecial); i >= 0 {
		return refused("debugger command %q: %s, and %q could run a second command; give one command without ; [ ] \\ or line breaks", cmd, why, cmd[i:i+1])
	}
	f := strings.Fields(cmd)
	if len(f) == 0 || safeCommands[f[0]] || (f[0] == "reg" && len(f) <= 2) {
		return nil
	}
	return refused("debugger command %q: %s; allowed are halt, resume, reset, md*, read_memory and reading registers", cmd, why)
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

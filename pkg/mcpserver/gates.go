package mcpserver

import (
	"context"
	"io"
	"net"
	"strings"

	"github.com/hilrun/hilrun/pkg/gate"
	"github.com/hilrun/hilrun/pkg/gate/devices"
	"github.com/hilrun/hilrun/pkg/gate/dial"
	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/steps"
)

// ServerGates is the policy of every effect the server has on the host, for the
// bench its clients' sequences run on and for its own tools, checked
// where the effect happens, whatever step, tool or request led there:
//   - programs: host commands (exec, build and upload tools, PlatformIO)
//     only with --allow-exec, never on a read-only server, only in a
//     folder under a root; the debugger servers, QEMUs and camera
//     programs the server's own configuration names; every one with the
//     policy's minimal environment (Policy.Environ);
//   - files: only under the roots, opened through os.Root;
//   - addresses: network consoles as CheckPort allows them (those of the
//     server's bench file as CheckTrustedPort), debuggers the server binds
//     itself or that --allow-probe names, launched servers on loopback;
//   - devices: as CheckPort allows them;
//   - the environment expressions see: none.
//
// The checks read c when they run (its policy, bench file, --sim and
// --qemu debuggers): New takes the server's gates from its own
// configuration, once complete. An error in the roots refuses every file
// (New reports it).
func (c *Config) ServerGates() gate.Policy {
	p := &c.Policy
	fs, err := files.Under(p.Roots...)
	if err != nil {
		fs = files.Policy{}
	}
	return gate.Policy{
		Env:     environ.Of(nil),
		Procs:   process.Policy{Env: environ.Of(p.Environ()), Allow: p.allowStart},
		Files:   fs,
		Dial:    dial.Policy{Allow: func(t dial.Target) error { return c.allowDial(p, t) }},
		Devices: devices.Policy{Allow: func(path, _ string) error { return p.CheckPort(path) }},
	}
}

// allowStart is the process gate's check of a program the server starts.
func (p *Policy) allowStart(st process.Start) error {
	switch st.Purpose {
	case process.DebugServer, process.Emulator, process.Camera:
		// Their programs and arguments come from the server's own
		// configuration; what a client may add to them (configuration
		// files, camera inputs) is refused before the plan runs.
		return nil
	case process.HostCommand:
		if why := p.refusal(steps.CapHostExec); why != "" {
			return refused("start %s: %s", st.Args[0], why)
		}
		if st.Dir == "" || !p.inRoot(st.Dir) {
			return refused("start %s: it would run in %q, outside the --root folders (%s)", st.Args[0], st.Dir, strings.Join(p.Roots, ", "))
		}
		return nil
	}
	return refused("start %s: a %s is not something this server starts", st.Args[0], st.Purpose)
}

// allowDial is the dial gate's check of an address the server connects to.
func (c *Config) allowDial(p *Policy, t dial.Target) error {
	switch t.Purpose {
	case dial.Console:
		trusted := c.benchPort(t.Address)
		for _, scheme := range []string{"tcp://", "rfc2217://"} {
			check := p.CheckPort
			if trusted {
				check = p.CheckTrustedPort
			}
			if check(scheme+t.Address) == nil {
				return nil
			}
		}
		return p.CheckPort("tcp://" + t.Address)
	case dial.Probe:
		own := c.ownProbeAddr(t.Address)
		if t.Network == "unix" && !own {
			return refused("debugger socket %s: this server attaches to a Unix socket only where its --bench file or --qemu names it", t.Address)
		}
		if own {
			return nil
		}
		for _, a := range []string{t.Address, "tcl://" + t.Address, "telnet://" + t.Address} {
			if p.CheckProbeAddr(a, false) == nil {
				return nil
			}
		}
		return p.CheckProbeAddr(t.Address, false)
	case dial.Launched:
		host, _, err := net.SplitHostPort(t.Address)
		if ip := net.ParseIP(host); err == nil && ip != nil && ip.IsLoopback() {
			return nil
		}
		return refused("launched server at %s: hilrun reaches the servers it launches on loopback only", t.Address)
	}
	return refused("dial %s: a %s is not something this server connects to", t.Address, t.Purpose)
}

// ownProbeAddr says whether addr (HOST:PORT, a socket's path, with or
// without a tcl:// or telnet:// scheme) is a debugger the server binds
// itself: --sim's, --qemu's, or its bench file's.
func (c *Config) ownProbeAddr(addr string) bool {
	if addr == "" {
		return false
	}
	own := []string{c.DefaultOpenOCD, c.DefaultGDB}
	if c.Bench != nil {
		for _, p := range c.Bench.Probes {
			if p != nil {
				own = append(own, p.OpenOCD, p.GDB)
			}
		}
	}
	for _, o := range own {
		if o != "" && (o == addr || stripScheme(o) == stripScheme(addr)) {
			return true
		}
	}
	return false
}

// benchPort says whether HOST:PORT is a network console of the server's
// bench file.
func (c *Config) benchPort(addr string) bool {
	if c.Bench == nil {
		return false
	}
	for _, d := range c.Bench.Devices {
		if d != nil && d.Port != "" && stripScheme(d.Port) == addr {
			return true
		}
	}
	return false
}

func stripScheme(addr string) string {
	if _, rest, ok := strings.Cut(addr, "://"); ok {
		return rest
	}
	return addr
}

// rootedRunner runs a program that names no folder (a PlatformIO verb on
// no project) in the first root: host programs run only inside one.
type rootedRunner struct {
	process.Runner
	roots []string
}

func (r rootedRunner) Run(ctx context.Context, argv []string, dir string, env []string, out io.Writer) (int, error) {
	if dir == "" && len(r.roots) > 0 {
		dir = r.roots[0]
	}
	return r.Runner.Run(ctx, argv, dir, env, out)
}

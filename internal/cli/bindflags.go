package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hilrun/hilrun/pkg/steps"
)

// BindFlags are the flags that bind a sequence's devices and probes to
// this bench, registered once for run, repl and validate (mcp takes the
// probe ones): --port, and --probe with its older spellings --openocd and
// --gdb.
type BindFlags struct {
	Ports   []string
	OpenOCD []string
	GDB     []string
	// Probes are --probe NAME=URL values: openocd://HOST:PORT or
	// gdb://ADDRESS[?attach=MODE].
	Probes []string
	// Secrets are --secret NAME=env:VAR or NAME=file:PATH values.
	Secrets []string
}

// register adds the flags to f. checkOnly words them for validate, which
// binds nothing but checks what run would get.
func (b *BindFlags) register(f *pflag.FlagSet, checkOnly bool) {
	say := func(use string) string {
		if checkOnly {
			return "a binding run will get: " + use
		}
		return use
	}
	f.StringArrayVar(&b.Ports, "port", nil, say("bind a device to a serial port, `NAME=PATH` (repeatable), or PATH for a sequence's only device"))
	b.registerProbes(f, checkOnly)
	registerSecrets(f, &b.Secrets)
}

// registerProbes adds --probe, --openocd and --gdb to f.
func (b *BindFlags) registerProbes(f *pflag.FlagSet, checkOnly bool) {
	say := func(use string) string {
		if checkOnly {
			return "a binding run will get: " + use
		}
		return use
	}
	f.StringArrayVar(&b.Probes, "probe", nil, say("bind a probe, `NAME=URL`: openocd://HOST:PORT (a running OpenOCD's telnet or Tcl port) or gdb://HOST:PORT, gdb:///dev/ttyACM0, gdb:///path/of/a/unix.sock (a GDB remote stub), with ?attach=running for a target that ran before (gdbserver --attach) (repeatable)"))
	f.StringArrayVar(&b.OpenOCD, "openocd", nil, say("--probe NAME=openocd://HOST:PORT, written `NAME=HOST:PORT` (repeatable)"))
	f.StringArrayVar(&b.GDB, "gdb", nil, say("--probe NAME=gdb://ADDRESS, written `NAME=ADDRESS`: HOST:PORT, /dev/ttyACM0 or a Unix socket's path, with ?attach=running (repeatable)"))
}

// probeFlags returns the --openocd and --gdb values with each --probe
// added to its kind's list, in the form those flags take.
func (b *BindFlags) probeFlags() (openocd, gdb []string, err error) {
	openocd, gdb = append([]string(nil), b.OpenOCD...), append([]string(nil), b.GDB...)
	for _, p := range b.Probes {
		kind, flag, err := parseProbeFlag(p)
		if err != nil {
			return nil, nil, err
		}
		switch kind {
		case steps.BackendOpenOCD:
			openocd = append(openocd, flag)
		default:
			gdb = append(gdb, flag)
		}
	}
	return openocd, gdb, nil
}

// parseProbeFlag reads one --probe NAME=URL value and returns the
// backend it names and the NAME=ADDRESS form of --openocd or --gdb.
func parseProbeFlag(v string) (backend, flag string, err error) {
	name, url, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return "", "", fmt.Errorf("--probe %s: want NAME=URL, such as board=openocd://127.0.0.1:4444 or board=gdb://127.0.0.1:1234", v)
	}
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok || rest == "" {
		if strings.HasPrefix(url, "qemu:") {
			return "", "", fmt.Errorf("--probe %s: a QEMU board is started with --qemu FILE, which binds its probe", v)
		}
		return "", "", fmt.Errorf("--probe %s: want openocd://HOST:PORT or gdb://ADDRESS after %s=", v, name)
	}
	switch scheme {
	case "openocd":
		if strings.Contains(rest, "?") {
			return "", "", fmt.Errorf("--probe %s: an openocd:// address takes no options", v)
		}
		return steps.BackendOpenOCD, name + "=" + rest, nil
	case "gdb":
		if _, _, err := steps.ParseGDBTarget(rest); err != nil {
			return "", "", fmt.Errorf("--probe %s: %w", v, err)
		}
		return steps.BackendGDB, name + "=" + rest, nil
	}
	return "", "", fmt.Errorf("--probe %s: unknown kind of probe %q: want openocd:// or gdb://", v, scheme)
}

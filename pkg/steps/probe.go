package steps

import (
	"strings"

	"gopkg.in/yaml.v3"
)

// This file holds the probes section of sequences and bench files: the
// debug probes that memory and debugger steps go through (OpenOCD, a GDB
// stub, a QEMU hilrun starts), how they are written, and how each step
// finds its probe.

// DefaultProbe is the name of the probe a sequence without a probes
// section uses.
const DefaultProbe = "target"

// Probe returns the probe called name, or nil.
func (s *Sequence) Probe(name string) *Probe {
	for _, p := range s.Probes {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Probe is a debug probe: reached through OpenOCD (a running OpenOCD's
// telnet address, or an OpenOCD that hilrun launches for the run), or
// through a GDB remote stub (one running, or the GDB server of a QEMU that
// hilrun launches for the run: Launch.QEMU). Backend says which.
type Probe struct {
	Name string
	// OpenOCD is host:port of a running OpenOCD's telnet server.
	OpenOCD string
	Launch  *Launch
	// GDB is host:port of a GDB remote stub (QEMU's gdbstub, pyOCD's or
	// J-Link's GDB server), or the serial port of a probe that speaks the
	// GDB remote protocol itself (a Black Magic Probe's /dev/ttyACM0).
	GDB string
	// GDBAttach is how the target behind GDB stands when hilrun attaches
	// (GDBAttachRunning, GDBAttachHalted, GDBAttachAuto); "" means auto,
	// and lets a binding that names no mode keep this one.
	GDBAttach string
	// ELF is the default file for symbol lookups on this probe.
	ELF string
	// Implicit is true for a probe only named by steps.
	Implicit bool
	Pos      Pos
}

// Probe backends: how a probe is reached (Probe.Backend). internal/engine
// registers how each is opened.
const (
	BackendOpenOCD = "openocd"
	BackendGDB     = "gdb"
)

// Backend says how p is reached: BackendOpenOCD for openocd: and launch:,
// BackendGDB for gdb: and launch: {qemu: ...}, "" while nothing binds it.
func (p *Probe) Backend() string {
	switch {
	case p.GDB != "" || p.LaunchesQEMU():
		return BackendGDB
	case p.OpenOCD != "" || p.Launch != nil:
		return BackendOpenOCD
	}
	return ""
}

// AttachOpenOCD binds p to the running OpenOCD at addr, in place of
// whatever bound it before.
func (p *Probe) AttachOpenOCD(addr string) {
	p.OpenOCD, p.Launch, p.GDB, p.GDBAttach = addr, nil, "", ""
}

// LaunchesQEMU reports whether hilrun starts a QEMU for p, whose GDB
// server p is then attached to.
func (p *Probe) LaunchesQEMU() bool { return p.Launch != nil && p.Launch.QEMU != nil }

// AttachGDB binds p to the GDB remote stub at addr (HOST:PORT, a serial
// port or a Unix socket), in place of whatever bound it before. The
// attach mode is kept.
func (p *Probe) AttachGDB(addr string) {
	p.OpenOCD, p.Launch, p.GDB = "", nil, addr
}

// Launch says how to start the server a probe talks to: OpenOCD, or with
// QEMU set a QEMU (and none of the OpenOCD settings).
type Launch struct {
	Binary        string
	Config        []string
	AdapterSerial string
	Commands      []string
	Args          []string
	QEMU          *QEMULaunch
}

// QEMULaunch says how to start QEMU as a virtual board for a probe: the
// probe attaches to QEMU's GDB server, and the device named Console talks
// to the guest's first serial port. Paths are absolute once loaded
// (relative to the file that names them).
type QEMULaunch struct {
	// Binary is the QEMU program; "" means qemu-system-arm.
	Binary string
	// Machine is QEMU's -machine, such as mps2-an385 or virt. Required.
	Machine string
	// Kernel (-kernel) and BIOS (-bios) are the images the machine runs;
	// at least one is given.
	Kernel, BIOS string
	// Args are more arguments for QEMU, after hilrun's own.
	Args []string
	// Console names the device bound to the guest's first serial port;
	// "" binds none.
	Console string
	Pos     Pos
}

// The keys of a probe, of its launch: {...} and of launch: {qemu: {...}}.
var (
	probeKeys  = []string{"openocd", "launch", "gdb", "elf", "adapter_serial"}
	launchKeys = []string{"config", "adapter_serial", "commands", "args", "binary", "qemu"}
	qemuKeys   = []string{"machine", "kernel", "bios", "args", "console", "binary"}
)

// probes decodes a probes section: name -> {openocd: host:port} or
// {launch: {...}}; in a bench file a bare string is an adapter serial
// number.
func (d *decoder) probes(n *yaml.Node, bench bool) {
	d.namedEntries(n, "probes", "probe names to their settings", "probe name", func(name string, p pair) {
		pr := &Probe{Name: name, Pos: d.pos(p.key)}
		switch {
		case p.val.Kind == yaml.ScalarNode && p.val.Tag != "!!null" && bench:
			pr.Launch = &Launch{AdapterSerial: p.val.Value}
		case p.val.Kind == yaml.MappingNode:
			d.probe(pr, p.val)
		case p.val.Tag != "!!null":
			d.add(d.pos(p.val), "probe %s must be a mapping such as {openocd: 127.0.0.1:4444} or {launch: {config: [...]}}, found %s", name, kindName(p.val))
		}
		d.seq.Probes = append(d.seq.Probes, pr)
	})
}

// probe fills pr from its mapping, and checks that it says one way to
// reach the probe.
func (d *decoder) probe(pr *Probe, n *yaml.Node) {
	for _, p := range d.pairs(n) {
		switch p.key.Value {
		case "openocd":
			pr.OpenOCD, _ = d.str(p.val, "openocd")
			if pr.OpenOCD != "" && !strings.Contains(pr.OpenOCD, ":") {
				d.add(d.pos(p.val), "openocd must be HOST:PORT of a running OpenOCD's telnet server, like 127.0.0.1:4444, or tcl://HOST:PORT of its Tcl RPC server")
			}
		case "gdb":
			d.gdb(pr, p.val)
		case "launch":
			l := d.launch(p.val)
			if pr.Launch != nil && l.AdapterSerial == "" {
				l.AdapterSerial = pr.Launch.AdapterSerial
			}
			pr.Launch = l
		case "adapter_serial":
			if pr.Launch == nil {
				pr.Launch = &Launch{}
			}
			pr.Launch.AdapterSerial, _ = d.text(p.val, "adapter_serial")
		case "elf":
			if path, ok := d.str(p.val, "elf"); ok {
				pr.ELF = d.relPath(path)
			}
		default:
			d.unknownKey(p.key, "probe "+pr.Name, probeKeys)
		}
	}
	switch {
	case pr.OpenOCD != "" && pr.Launch != nil:
		d.add(pr.Pos, "probe %s: give openocd (attach to a running one) or launch, not both", pr.Name)
	case pr.GDB != "" && (pr.OpenOCD != "" || pr.Launch != nil):
		d.add(pr.Pos, "probe %s: give gdb (a GDB remote stub) or openocd/launch (OpenOCD), not both", pr.Name)
	case pr.LaunchesQEMU() && pr.Launch.AdapterSerial != "":
		d.add(pr.Pos, "probe %s: adapter_serial picks the adapter of a launched OpenOCD, and launch starts QEMU: give one of them", pr.Name)
	}
}

// launch reads launch: how to start an OpenOCD, or with qemu: a QEMU.
func (d *decoder) launch(n *yaml.Node) *Launch {
	l := &Launch{}
	if n.Kind != yaml.MappingNode {
		d.add(d.pos(n), "launch must be a mapping such as {config: [interface/stlink.cfg, target/stm32f4x.cfg]}, found %s", kindName(n))
		return l
	}
	for _, p := range d.pairs(n) {
		switch p.key.Value {
		case "config":
			l.Config = d.strings(p.val, "config")
		case "commands":
			l.Commands = d.strings(p.val, "commands")
		case "args":
			l.Args = d.strings(p.val, "args")
		case "adapter_serial":
			l.AdapterSerial, _ = d.text(p.val, "adapter_serial")
		case "binary":
			l.Binary, _ = d.str(p.val, "binary")
		case "qemu":
			l.QEMU = d.qemu(p.val)
		default:
			d.unknownKey(p.key, "launch", launchKeys)
		}
	}
	if l.QEMU != nil && (len(l.Config) > 0 || l.AdapterSerial != "" || len(l.Commands) > 0 || len(l.Args) > 0 || l.Binary != "") {
		d.add(d.pos(n), "launch starts QEMU (qemu: {...}) or OpenOCD (config, adapter_serial, commands, args, binary), not both; QEMU's own binary and args go inside qemu:")
	}
	return l
}

// qemu decodes launch: {qemu: {...}}, a QEMU hilrun starts as a virtual
// board.
func (d *decoder) qemu(n *yaml.Node) *QEMULaunch {
	q := &QEMULaunch{Pos: d.pos(n)}
	if n.Kind != yaml.MappingNode {
		d.add(d.pos(n), "qemu must be a mapping such as {machine: mps2-an385, kernel: build/firmware.elf, console: console}, found %s", kindName(n))
		return q
	}
	for _, p := range d.pairs(n) {
		switch p.key.Value {
		case "machine":
			q.Machine, _ = d.str(p.val, "machine")
		case "kernel":
			if path, ok := d.str(p.val, "kernel"); ok {
				q.Kernel = d.relPath(path)
			}
		case "bios":
			if path, ok := d.str(p.val, "bios"); ok {
				q.BIOS = d.relPath(path)
			}
		case "args":
			q.Args = d.strings(p.val, "args")
		case "console":
			q.Console, _ = d.str(p.val, "console")
		case "binary":
			q.Binary, _ = d.str(p.val, "binary")
		default:
			d.unknownKey(p.key, "qemu", qemuKeys)
		}
	}
	if q.Machine == "" {
		d.add(q.Pos, "qemu needs machine: (QEMU's -machine, such as mps2-an385 or virt)")
	}
	if q.Kernel == "" && q.BIOS == "" {
		d.add(q.Pos, "qemu needs kernel: FILE (the firmware QEMU loads) or bios: FILE (such as U-Boot on virt)")
	}
	return q
}

// qemuConsoles checks that the console of each QEMU a probe launches is a
// device of the sequence, which has no port of its own: the launch binds
// it to QEMU's serial port.
func (v *validator) qemuConsoles() {
	for _, p := range v.seq.Probes {
		if !p.LaunchesQEMU() || p.Launch.QEMU.Console == "" {
			continue
		}
		q := p.Launch.QEMU
		d := v.seq.Device(q.Console)
		switch {
		case d == nil:
			names := deviceNames(v.seq)
			v.add(q.Pos, "qemu console: unknown device %q; devices are %s%s (a sequence without steps that talk to a device has none: declare it under devices:)", q.Console, listOrNone(names), suggest(q.Console, names))
		case d.Port != "" || d.USB != nil:
			v.add(q.Pos, "qemu console: device %s has a port of its own in the sequence, and probe %s's launch binds it to QEMU's serial port: give one of them", d.Name, p.Name)
		}
	}
}

// usesProbe reports whether s talks to a debug probe.
func usesProbe(s *Step) bool {
	return IsProbeKind(s.Kind) || s.Kind == KindUpload && s.Build != nil && s.Build.Image != nil
}

// resolveProbes gives every memory and debugger step its probe: a declared
// one, the only one, or, in a sequence that declares none, a probe by the
// name the step gives (seed files name probes by nickname) that the bench,
// --openocd or --sim binds.
func (v *validator) resolveProbes() {
	declared := len(v.seq.Probes)
	var names []string
	for _, p := range v.seq.Probes {
		names = append(names, p.Name)
	}
	var walk func([]*Step)
	walk = func(ss []*Step) {
		for _, s := range ss {
			if usesProbe(s) {
				switch {
				case s.To == "" && declared == 1:
					s.To = v.seq.Probes[0].Name
				case s.To == "" && declared > 1:
					v.add(s.Pos, "this %s step needs probe: because the sequence has several probes (%s)", s.Kind, strings.Join(names, ", "))
				case s.To == "":
					s.To = DefaultProbe
				case v.seq.Probe(s.To) != nil:
				case declared > 0:
					v.add(s.Pos, "probe: unknown probe %q; probes are %s%s", s.To, strings.Join(names, ", "), suggest(s.To, names))
				}
				if declared == 0 && s.To != "" && v.seq.Probe(s.To) == nil {
					v.seq.Probes = append(v.seq.Probes, &Probe{Name: s.To, Implicit: true, Pos: s.Pos})
				}
			}
			walk(Children(s))
		}
	}
	walk(v.seq.Steps)
	walk(v.seq.Retry.Before())
	walk(v.seq.Finally)
}

package steps

import (
	"strings"

	"gopkg.in/yaml.v3"
)

var probeKeys = []string{"openocd", "launch", "gdb", "elf", "adapter_serial"}
var launchKeys = []string{"config", "adapter_serial", "commands", "args", "binary", "qemu"}
var qemuKeys = []string{"machine", "kernel", "bios", "args", "console", "binary"}

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

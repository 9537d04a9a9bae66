package steps

import (
	"path/filepath"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

func isMemKind(k Kind) bool {
	return k == KindMemRead || k == KindMemWrite || k == KindMemPoll
}

// memField decodes the keys of memory and debugger steps; it reports
// whether it handled k.
func (d *decoder) memField(s *Step, k string, v *yaml.Node) bool {
	if isMemKind(s.Kind) && s.Mem == nil {
		s.Mem = &MemSpec{}
	}
	m := s.Mem
	switch {
	case isMemKind(s.Kind):
		switch k {
		case "mem_read", "mem_write", "mem_poll":
			// true, or the address itself.
			if v.Kind == yaml.ScalarNode && v.Tag == "!!bool" {
				if b, _ := d.boolean(v, k); !b {
					d.add(d.pos(v), "%s must be true or an address", k)
				}
				return true
			}
			d.address(m, v)
		case "address":
			d.address(m, v)
		case "symbol":
			m.Symbol, _ = d.str(v, "symbol")
		case "offset":
			if v.Kind == yaml.ScalarNode && v.Tag == "!!int" {
				var o int64
				if v.Decode(&o) == nil {
					m.Offset = o
					return true
				}
			}
			n, ok := d.number64(v, "offset")
			if ok {
				m.Offset = int64(n)
			}
		case "elf", "elf_path":
			if path, ok := d.str(v, k); ok {
				m.ELF = d.relPath(path)
			}
		case "width":
			w, ok := d.integer(v, "width", 8, 64)
			if ok && w != 8 && w != 16 && w != 32 && w != 64 {
				d.add(d.pos(v), "width must be 8, 16, 32 or 64 bits, found %d", w)
			}
			m.Width = w
		case "count":
			m.Count, _ = d.integer(v, "count", 1, 1<<20)
		case "value":
			m.Values = d.values(v, "value")
		case "verify":
			m.Verify, _ = d.boolean(v, "verify")
		case "expect":
			m.Check = d.memCheck(v)
		case "until":
			src, ok := d.text(v, "until")
			if ok {
				m.Until = &Expr{Src: src, Pos: d.pos(v)}
			}
		case "interval":
			m.Interval, _ = d.durationIn(v, "interval", timeoutRange)
		case "label":
			m.Label, _ = d.text(v, "label")
		case "save":
			if v.Kind != yaml.ScalarNode || v.Tag != "!!str" {
				d.add(d.pos(v), "save must be a variable name, found %s", kindName(v))
				return true
			}
			name := v.Value
			if !validName(name) {
				d.add(d.pos(v), "save: %q is not a variable name", name)
			} else {
				m.SaveVar = name
			}
		case "timeout":
			s.Timeout, _ = d.durationIn(v, "timeout", timeoutRange)
		default:
			return false
		}
	default:
		return false
	}
	return true
}

// address reads a number ("0x48000014", 536870912) or an expression over
// variables ("base + 0x14").
func (d *decoder) address(m *MemSpec, v *yaml.Node) {
	if v.Kind != yaml.ScalarNode || v.Tag == "!!null" || v.Tag == "!!bool" {
		d.add(d.pos(v), "address must be a number like 0x20000000 or an expression, found %s", kindName(v))
		return
	}
	if m.Address != nil || m.hasAddr {
		d.add(d.pos(v), "the address is given twice: write it as the step's value or as address:, not both")
		return
	}
	m.hasAddr = true
	if n, err := parseUint(v.Value); err == nil {
		m.Addr = n
		return
	}
	if _, err := strconv.ParseInt(strings.TrimSpace(v.Value), 0, 64); err == nil {
		d.add(d.pos(v), "address %s is negative", v.Value)
		return
	}
	m.Address = &Expr{Src: v.Value, Pos: d.pos(v)}
}

func parseUint(s string) (uint64, error) {
	s = strings.ReplaceAll(strings.TrimSpace(s), "_", "")
	return strconv.ParseUint(s, 0, 64)
}

func (d *decoder) number64(v *yaml.Node, what string) (uint64, bool) {
	if v.Kind == yaml.ScalarNode && v.Tag != "!!null" && v.Tag != "!!bool" {
		if n, err := parseUint(v.Value); err == nil {
			return n, true
		}
	}
	d.add(d.pos(v), "%s must be a number like 0x40 or 64, found %s", what, kindName(v))
	return 0, false
}

// values reads one value or a list: numbers, or text with ${var}. what
// names the key in messages.
func (d *decoder) values(v *yaml.Node, what string) []ValueSpec {
	items := []*yaml.Node{v}
	if v.Kind == yaml.SequenceNode {
		items = nil
		for _, c := range v.Content {
			items = append(items, resolve(c))
		}
		if len(items) == 0 {
			d.add(d.pos(v), "%s must not be an empty list", what)
		}
	}
	var out []ValueSpec
	for _, it := range items {
		if it.Kind != yaml.ScalarNode || it.Tag == "!!null" || it.Tag == "!!bool" {
			d.add(d.pos(it), "%s must be a number like 0x40 or 64, or text with ${var}, found %s", what, kindName(it))
			continue
		}
		if n, err := parseUint(it.Value); err == nil {
			out = append(out, ValueSpec{Value: n, Pos: d.pos(it)})
			continue
		}
		t, ok := d.template(it, what)
		if !ok {
			continue
		}
		if t.IsStatic() {
			d.add(d.pos(it), "%s %q is not a number: expected something like 0x40, 64 or ${var}", what, it.Value)
			continue
		}
		out = append(out, ValueSpec{Text: t, Pos: d.pos(it)})
	}
	return out
}

// memCheck reads a mem_read or mem_poll expect: a value, a list, or
// {mask, value}.
func (d *decoder) memCheck(v *yaml.Node) *MemCheck {
	c := &MemCheck{}
	switch v.Kind {
	case yaml.MappingNode:
		for _, p := range d.pairs(v) {
			switch p.key.Value {
			case "mask":
				if n, ok := d.number64(p.val, "mask"); ok {
					c.Mask = &n
				}
			case "value":
				if p.val.Kind == yaml.SequenceNode {
					d.add(d.pos(p.val), "expect {mask, value} takes one value, found a list")
					continue
				}
				c.Values = d.values(p.val, "value")
			default:
				d.unknownKey(p.key, "expect", []string{"mask", "value"})
			}
		}
		if c.Values == nil {
			d.add(d.pos(v), "expect {mask, value} needs a value")
		}
	case yaml.SequenceNode:
		if len(v.Content) == 0 {
			d.add(d.pos(v), "expect must not be an empty list")
			break
		}
		c.Values = d.values(v, "expect")
	default:
		c.Values = d.values(v, "expect")
	}
	return c
}

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

// strings reads one text or a list of texts.
func (d *decoder) strings(n *yaml.Node, what string) []string {
	if n.Kind == yaml.ScalarNode {
		s, ok := d.text(n, what)
		if !ok {
			return nil
		}
		return []string{s}
	}
	if n.Kind != yaml.SequenceNode {
		d.add(d.pos(n), "%s must be a list of text, found %s", what, kindName(n))
		return nil
	}
	var out []string
	for _, c := range n.Content {
		if s, ok := d.text(resolve(c), what); ok {
			out = append(out, s)
		}
	}
	return out
}

// relPath makes a path written in a file relative to that file's folder,
// so sequences run from anywhere.
//
// The result is absolute: tools that open it (OpenOCD, make) may run in
// another folder than hilrun.
func (d *decoder) relPath(p string) string {
	if p == "" || filepath.IsAbs(p) || d.file == "" || strings.HasPrefix(d.file, "<") {
		return p
	}
	joined := filepath.Join(filepath.Dir(d.file), p)
	if abs, err := filepath.Abs(joined); err == nil {
		return abs
	}
	return joined
}

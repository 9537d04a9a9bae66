package steps

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/serialx"
)

// BenchFile is the bench file's default name, looked for beside a sequence.
const BenchFile = "hilrun.bench.yaml"

// Bench binds the logical device names of portable sequences to the ports
// of one bench: the same sequence runs on every bench that has a bench file.
type Bench struct {
	File    string
	Devices map[string]*Device
	Probes  map[string]*Probe
	Cameras map[string]*Camera
	// Power says how to switch each board of the bench off and on.
	Power map[string]*PowerEntry
}

var benchKeys = []string{"devices", "probes", "cameras", "power", "$schema"}

// LoadBench reads a bench file. Its devices take the same settings as a
// sequence's devices; what a bench entry sets overrides the sequence.
func LoadBench(path string) (*Bench, error) {
	data, err := ReadFile(path)
	if err != nil {
		return nil, err
	}
	root, err := parseNode(path, data)
	if err != nil {
		return nil, err
	}
	e := &errs{file: path}
	d := &decoder{errs: e, file: path, seq: &Sequence{}, ids: map[string]Pos{}}
	b := &Bench{File: path, Devices: map[string]*Device{}, Probes: map[string]*Probe{}, Cameras: map[string]*Camera{}}
	if root.Kind != yaml.MappingNode {
		d.add(d.pos(root), "a bench file must be a mapping with devices:, found %s", kindName(root))
		return nil, e.err()
	}
	for _, p := range d.pairs(root) {
		switch p.key.Value {
		case "devices":
			d.devices(p.val)
		case "probes":
			d.probes(p.val, true)
		case "cameras":
			d.cameras(p.val)
		case "power":
			d.power(p.val)
		case "$schema":
		default:
			d.unknownKey(p.key, "the bench file", benchKeys)
		}
	}
	for _, dev := range d.seq.Devices {
		b.Devices[dev.Name] = dev
	}
	for _, pr := range d.seq.Probes {
		b.Probes[pr.Name] = pr
	}
	for _, c := range d.seq.Cameras {
		b.Cameras[c.Name] = c
	}
	b.Power = d.seq.Power
	if err := e.err(); err != nil {
		return nil, err
	}
	return b, nil
}

// Bind applies the bench file (may be nil) and then the --port NAME=PATH
// and --openocd NAME=HOST:PORT overrides to the sequence's devices and
// probes. It is an error to name a device or probe the sequence does not
// have; a bench may list more than one sequence uses.
func Bind(seq *Sequence, bench *Bench, ports, openocds map[string]string) error {
	if bench != nil {
		for _, dev := range seq.Devices {
			if b, ok := bench.Devices[dev.Name]; ok {
				overlay(dev, b)
				if b.Port != "" || b.USB != nil {
					dev.PortFrom = "bench file " + bench.File
					if b.PortFrom != "" {
						dev.PortFrom = "bench file " + b.PortFrom
					}
				}
			}
		}
		for _, p := range seq.Probes {
			if b, ok := bench.Probes[p.Name]; ok {
				overlayProbe(p, b)
			}
		}
		for _, c := range seq.Cameras {
			if b, ok := bench.Cameras[c.Name]; ok {
				overlayCamera(c, b)
			}
		}
		for name, e := range bench.Power {
			if seq.Power == nil {
				seq.Power = map[string]*PowerEntry{}
			}
			seq.Power[name] = e
		}
	}
	if err := attachProbes(seq, "openocd", openocds, (*Probe).AttachOpenOCD); err != nil {
		return err
	}
	var names []string
	for name := range ports {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		dev := seq.Device(name)
		if dev == nil {
			var have []string
			for _, d := range seq.Devices {
				have = append(have, d.Name)
			}
			return fmt.Errorf("--port %s=%s: the sequence %s has no device %q; its devices are %s%s", name, ports[name], seq.File, name, listOrNone(have), suggest(name, have))
		}
		if err := serialx.CheckPortURL(ports[name]); err != nil {
			return fmt.Errorf("--port %s=%s: %w", name, ports[name], err)
		}
		dev.Port = ports[name]
		dev.USB = nil
		dev.PortFrom = "--port " + name + "=" + ports[name]
	}
	return nil
}

// BindGDB applies --gdb NAME=ADDR overrides after Bind: each probe named
// attaches to the GDB remote stub at ADDR (HOST:PORT or a serial port). It
// is an error to name a probe the sequence does not have, or one that
// --openocd binds too (openocds).
func BindGDB(seq *Sequence, gdbs, openocds map[string]string) error {
	for _, name := range Names(gdbs) {
		if addr, ok := openocds[name]; ok {
			return fmt.Errorf("--gdb %s=%s: probe %s is bound to OpenOCD by --openocd %s=%s too; give one of them", name, gdbs[name], name, name, addr)
		}
		if addr := gdbs[name]; !strings.Contains(addr, ":") && !strings.HasPrefix(addr, "/") {
			return fmt.Errorf("--gdb %s=%s: want HOST:PORT of a GDB remote stub, like 127.0.0.1:1234, or the path of a serial port, like /dev/ttyACM0", name, addr)
		}
	}
	return attachProbes(seq, "gdb", gdbs, (*Probe).AttachGDB)
}

// attachProbes binds each probe named in addrs (from --FLAG NAME=ADDR)
// with attach.
func attachProbes(seq *Sequence, flag string, addrs map[string]string, attach func(*Probe, string)) error {
	for _, name := range Names(addrs) {
		p := seq.Probe(name)
		if p == nil {
			var have []string
			for _, p := range seq.Probes {
				have = append(have, p.Name)
			}
			return fmt.Errorf("--%s %s=%s: the sequence %s has no probe %q; its probes are %s%s", flag, name, addrs[name], seq.File, name, listOrNone(have), suggest(name, have))
		}
		attach(p, addrs[name])
	}
	return nil
}

// overlay copies what b sets onto d.
func overlay(d, b *Device) {
	if b.Port != "" {
		d.Port, d.USB = b.Port, nil
	}
	if b.USB != nil {
		d.USB, d.Port = b.USB, ""
	}
	if b.Baud != 0 {
		d.Baud = b.Baud
	}
	if b.DataBits != 0 {
		d.DataBits = b.DataBits
	}
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&d.Parity, b.Parity}, {&d.StopBits, b.StopBits}, {&d.FlowControl, b.FlowControl}, {&d.LineEnding, b.LineEnding},
	} {
		if f.src != "" {
			*f.dst = f.src
		}
	}
	if b.DTR != nil {
		d.DTR = b.DTR
	}
	if b.RTS != nil {
		d.RTS = b.RTS
	}
	if b.Reconnect {
		d.Reconnect = true
	}
	if b.Settle != nil {
		d.Settle = b.Settle
	}
	if b.Prompt != nil {
		d.Prompt = b.Prompt
	}
	if b.Echo {
		d.Echo = true
	}
}

// ParseAssignments splits NAME=VALUE flags (--var, --port) into a map.
func ParseAssignments(flag string, items []string) (map[string]string, error) {
	out := map[string]string{}
	for _, it := range items {
		k, v, ok := strings.Cut(it, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--%s %q: expected NAME=VALUE", flag, it)
		}
		if flag == "var" && !validName(k) {
			return nil, fmt.Errorf("--var %q: %q is not a variable name", it, k)
		}
		if _, dup := out[k]; dup {
			return nil, fmt.Errorf("--%s %s is given twice", flag, k)
		}
		out[k] = v
	}
	return out, nil
}

// Names returns the sorted keys of m.
func Names(m map[string]string) []string {
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// overlayProbe copies what a bench entry sets onto a probe: an address to
// attach to replaces launching; an adapter serial number picks which of
// several probes the launched OpenOCD uses.
func overlayProbe(p, b *Probe) {
	switch {
	case b.GDB != "":
		p.AttachGDB(b.GDB)
	case b.OpenOCD != "":
		p.AttachOpenOCD(b.OpenOCD)
	case b.LaunchesQEMU():
		// A bench's QEMU replaces whatever the sequence says.
		q := *b.Launch.QEMU
		p.OpenOCD, p.GDB, p.Launch = "", "", &Launch{QEMU: &q}
	case b.Launch != nil:
		if p.Launch == nil || p.LaunchesQEMU() {
			p.Launch = &Launch{}
		}
		p.OpenOCD, p.GDB = "", ""
		l := b.Launch
		if len(l.Config) > 0 {
			p.Launch.Config = l.Config
		}
		if l.AdapterSerial != "" {
			p.Launch.AdapterSerial = l.AdapterSerial
		}
		if len(l.Commands) > 0 {
			p.Launch.Commands = l.Commands
		}
		if len(l.Args) > 0 {
			p.Launch.Args = l.Args
		}
		if l.Binary != "" {
			p.Launch.Binary = l.Binary
		}
	}
	if b.ELF != "" {
		p.ELF = b.ELF
	}
}

// overlayCamera copies what a bench entry sets onto a camera. A camera
// the bench gives an input is the bench's, no longer only named by steps.
func overlayCamera(c, b *Camera) {
	if b.Input != "" {
		c.Input, c.Format, c.Args = b.Input, b.Format, b.Args
		c.Implicit = false
	}
	if b.Size != "" {
		c.Size = b.Size
	}
}

// BindCameras points every camera of seq that nothing binds yet at input
// (the virtual board's camera for --sim), with ffmpeg input format format:
// a camera without an input, and one only named by steps (a capture's
// default camera, a device index or path). A camera that the sequence
// declares with an input, or that the bench file binds, stays its own.
func BindCameras(seq *Sequence, input, format string) {
	for _, c := range seq.Cameras {
		if c.Input == "" || c.Implicit {
			c.Input, c.Format, c.Args, c.Size = input, format, nil, ""
		}
	}
}

// CheckPower gives each power step without a device its board, and
// reports a board without a power entry, or without a command for the
// step's action. The commands for a board come from the bench file (or
// the sequence), so this is only known after Bind: a step's board is the
// one it names, else the only power entry, else the only device.
func CheckPower(seq *Sequence) error {
	var list ErrorList
	add := func(s *Step, format string, args ...any) {
		list = append(list, &Error{Pos: s.Pos, Msg: fmt.Sprintf(format, args...)})
	}
	Walk(seq, func(s *Step) {
		if s.Kind != KindPower || s.Power == nil {
			return
		}
		p := s.Power
		// The default is set on the step only once it has an entry, so
		// that checking again after another bench starts afresh.
		target := p.Target
		if target == "" {
			switch {
			case len(seq.Power) == 1:
				for name := range seq.Power {
					target = name
				}
			case len(seq.Devices) == 1:
				target = seq.Devices[0].Name
			case len(seq.Power) == 0 && len(seq.Devices) == 0:
				target = DefaultDevice
			default:
				add(s, "this power step needs device: because there are several boards (%s)", strings.Join(powerNames(seq), ", "))
				return
			}
		}
		e, ok := seq.Power[target]
		switch {
		case !ok:
			add(s, "power: no power entry for %q: add one to the bench file, such as power: {%s: {on: [uhubctl, -a, on, -p, \"2\"], off: [uhubctl, -a, off, -p, \"2\"]}}", target, target)
		case p.Action != "cycle" && e.PowerCommand(p.Action) == nil:
			add(s, "power %s %s: the power entry for %s (%s) has no %s: command", p.Action, target, target, e.Pos, p.Action)
		default:
			p.Target = target
		}
	})
	if len(list) > 0 {
		return list
	}
	return nil
}

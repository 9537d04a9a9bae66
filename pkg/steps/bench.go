package steps

import (
	"fmt"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/hilrun/hilrun/pkg/gate/files"
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
	// Secrets say where each secret's value comes from (see secrets.go).
	Secrets map[string]*SecretSource
	// Ladder is the bench's health check and recovery ladder (see
	// recover.go); nil when the bench has neither.
	Ladder *Ladder
}

var benchKeys = []string{"devices", "probes", "cameras", "power", "secrets", "health", "recover", "$schema"}

// LoadBench reads a bench file. Its devices take the same settings as a
// sequence's devices; what a bench entry sets overrides the sequence.
func LoadBench(fs files.Policy, path string) (*Bench, error) {
	data, err := ReadFile(fs, path)
	if err != nil {
		return nil, err
	}
	root, err := parseNode(path, data)
	if err != nil {
		return nil, err
	}
	e := &errs{file: path}
	d := &decoder{errs: e, file: path, seq: &Sequence{}, ids: map[string]Pos{}}
	if root.Kind != yaml.MappingNode {
		d.add(d.pos(root), "a bench file must be a mapping with devices:, found %s", kindName(root))
		return nil, e.err()
	}
	b := d.bench(d.pairs(root), "the bench file", benchKeys)
	if err := e.err(); err != nil {
		return nil, err
	}
	return b, nil
}

// bench decodes a bench's entries (a bench file's, or an inline bench of
// a pool file); a key not in keys is unknown in where. The decoder's
// sequence is replaced.
func (d *decoder) bench(pairs []pair, where string, keys []string) *Bench {
	d.seq = &Sequence{}
	b := &Bench{File: d.file, Devices: map[string]*Device{}, Probes: map[string]*Probe{}, Cameras: map[string]*Camera{}}
	for _, p := range pairs {
		switch p.key.Value {
		case "devices":
			d.devices(p.val)
		case "probes":
			d.probes(p.val, true)
		case "cameras":
			d.cameras(p.val)
		case "power":
			d.power(p.val)
		case "secrets":
			if slices.Contains(keys, "secrets") {
				b.Secrets = d.secretSources(p.val)
				break
			}
			d.unknownKey(p.key, where, keys)
		default:
			if !slices.Contains(keys, p.key.Value) {
				d.unknownKey(p.key, where, keys)
			}
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
	b.Ladder = d.ladder(pairs, b)
	return b
}

// Binding is what binds a loaded sequence to one bench: the bench file (may
// be nil), then ports by device name, OpenOCD telnet (or tcl://) addresses
// and GDB remote stubs by probe name.
type Binding struct {
	Bench    *Bench
	Ports    map[string]string
	OpenOCDs map[string]string
	GDBs     map[string]string
}

// BindError is a Binding that names a device or probe the sequence does
// not have, or binds a probe twice. Its message names no command-line flag
// (MCP callers see it too); Kind says which map of the Binding holds the
// entry ("port", "openocd" or "gdb"), so that a command can say which of
// its flags gave it.
type BindError struct {
	Kind, Name, Value string
	Msg               string
}

func (e *BindError) Error() string { return e.Msg }

// Bind returns a copy of seq bound to a bench: the bench file, then the
// ports, OpenOCD and GDB addresses of b. seq itself is never changed, so
// one loaded sequence binds to many benches. The copy has its own devices,
// probes, cameras and power entries (CloneBindings); steps are shared. It
// is an error to name a device or probe the sequence does not have (a
// *BindError); a bench may list more than one sequence uses.
func Bind(seq *Sequence, b Binding) (*Sequence, error) {
	seq = CloneBindings(seq)
	if bench := b.Bench; bench != nil {
		for _, dev := range seq.Devices {
			if bd, ok := bench.Devices[dev.Name]; ok {
				overlay(dev, bd)
				if bd.Port != "" || bd.USB != nil {
					dev.PortFrom = "bench file " + bench.File
					if bd.PortFrom != "" {
						dev.PortFrom = "bench file " + bd.PortFrom
					}
				}
			}
		}
		for _, p := range seq.Probes {
			if bp, ok := bench.Probes[p.Name]; ok {
				overlayProbe(p, bp)
			}
		}
		for _, c := range seq.Cameras {
			if bc, ok := bench.Cameras[c.Name]; ok {
				overlayCamera(c, bc)
			}
		}
		for name, e := range bench.Power {
			seq.Power[name] = e
		}
	}
	if err := attachProbes(seq, "openocd", b.OpenOCDs, (*Probe).AttachOpenOCD); err != nil {
		return nil, err
	}
	for _, name := range Names(b.Ports) {
		dev := seq.Device(name)
		if dev == nil {
			var have []string
			for _, d := range seq.Devices {
				have = append(have, d.Name)
			}
			return nil, &BindError{Kind: "port", Name: name, Value: b.Ports[name],
				Msg: fmt.Sprintf("bind device %s to %s: the sequence %s has no device %q; its devices are %s%s", name, b.Ports[name], seq.File, name, listOrNone(have), suggest(name, have))}
		}
		if err := CheckPortURL(b.Ports[name]); err != nil {
			return nil, &BindError{Kind: "port", Name: name, Value: b.Ports[name],
				Msg: fmt.Sprintf("bind device %s to %s: %v", name, b.Ports[name], err)}
		}
		dev.Port = b.Ports[name]
		dev.USB = nil
		dev.PortFrom = "--port " + name + "=" + b.Ports[name]
	}
	for _, name := range Names(b.GDBs) {
		addr := b.GDBs[name]
		if oc, ok := b.OpenOCDs[name]; ok {
			return nil, &BindError{Kind: "gdb", Name: name, Value: addr,
				Msg: fmt.Sprintf("bind probe %s to the GDB remote stub %s: it is bound to the OpenOCD at %s too; give one of them", name, addr, oc)}
		}
		if _, _, err := ParseGDBTarget(addr); err != nil {
			return nil, &BindError{Kind: "gdb", Name: name, Value: addr,
				Msg: fmt.Sprintf("bind probe %s to the GDB remote stub %q: %v", name, addr, err)}
		}
	}
	if err := attachProbes(seq, "gdb", b.GDBs, bindGDB); err != nil {
		return nil, err
	}
	return seq, nil
}

// CloneBindings returns a copy of seq with its own devices, probes (and
// their launches), cameras and power map: everything binding changes.
// Steps, variables and patterns are shared; nothing changes them after
// loading.
func CloneBindings(seq *Sequence) *Sequence {
	c := *seq
	c.Devices = make([]*Device, len(seq.Devices))
	for i, d := range seq.Devices {
		dc := *d
		c.Devices[i] = &dc
	}
	c.Probes = make([]*Probe, len(seq.Probes))
	for i, p := range seq.Probes {
		pc := *p
		if p.Launch != nil {
			l := *p.Launch
			if l.QEMU != nil {
				q := *l.QEMU
				l.QEMU = &q
			}
			pc.Launch = &l
		}
		c.Probes[i] = &pc
	}
	c.Cameras = make([]*Camera, len(seq.Cameras))
	for i, cam := range seq.Cameras {
		cc := *cam
		c.Cameras[i] = &cc
	}
	c.Power = make(map[string]*PowerEntry, len(seq.Power))
	for name, e := range seq.Power {
		c.Power[name] = e
	}
	return &c
}

// attachProbes binds each probe named in addrs with attach; kind is the
// Binding's map ("openocd", "gdb") for a BindError.
func attachProbes(seq *Sequence, kind string, addrs map[string]string, attach func(*Probe, string)) error {
	what := map[string]string{"openocd": "the OpenOCD at", "gdb": "the GDB remote stub"}[kind]
	for _, name := range Names(addrs) {
		p := seq.Probe(name)
		if p == nil {
			var have []string
			for _, p := range seq.Probes {
				have = append(have, p.Name)
			}
			return &BindError{Kind: kind, Name: name, Value: addrs[name],
				Msg: fmt.Sprintf("bind probe %s to %s %s: the sequence %s has no probe %q; its probes are %s%s", name, what, addrs[name], seq.File, name, listOrNoneUnder(have, "probes"), suggest(name, have))}
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
	if b.SyncTimeout > 0 {
		d.SyncTimeout = b.SyncTimeout
	}
	if b.Prompt != nil {
		d.Prompt = b.Prompt
	}
	if b.Echo {
		d.Echo = true
	}
	if b.Buffer != 0 {
		d.Buffer = b.Buffer
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
		if b.GDBAttach != "" {
			p.GDBAttach = b.GDBAttach
		}
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

// BindCameras returns a copy of seq (CloneBindings) whose cameras that
// nothing binds yet point at input (the virtual board's camera for a
// virtual bench), with ffmpeg input format format: a camera without an
// input, and one only named by steps (a capture's default camera, a device
// index or path). A camera that the sequence declares with an input, or
// that the bench file binds, stays its own. seq is not changed.
func BindCameras(seq *Sequence, input, format string) *Sequence {
	seq = CloneBindings(seq)
	for _, c := range seq.Cameras {
		if c.Input == "" || c.Implicit {
			c.Input, c.Format, c.Args, c.Size = input, format, nil, ""
		}
	}
	return seq
}

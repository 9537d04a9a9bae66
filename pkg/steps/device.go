package steps

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// This file holds the devices section of sequences and bench files: the
// serial consoles that serial steps talk to, how they are written, and
// how each serial step finds its device.

// DefaultDevice is the name of the device a sequence without a devices
// section talks to.
const DefaultDevice = "console"

// Device returns the device called name, or nil.
func (s *Sequence) Device(name string) *Device {
	for _, d := range s.Devices {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// Device is a serial console the sequence talks to, by logical name.
type Device struct {
	Name string
	// Port is the path of the serial device; empty when USB or the bench
	// binds it.
	Port string
	// PortFrom says where Port or USB came from, for messages: the
	// position of the device in its file ("seq.yaml:4:3"), "bench file
	// hilrun.bench.yaml:3:3", "--port dut=/dev/ttyUSB0", "--sim"; "" when
	// not known.
	PortFrom    string
	USB         *USBMatch
	Baud        int
	DataBits    int
	Parity      string
	StopBits    string
	FlowControl string
	LineEnding  string
	DTR, RTS    *bool
	Reconnect   bool
	// Settle is how long a regexp match that bytes still arriving could
	// change is held for silence on this device (see stream.WithSettle);
	// nil means the default, stream.DefaultSettle.
	Settle *time.Duration
	// SyncTimeout bounds the console sync before the first send on a
	// connection the run opened (see Prompt); 0 means the sequence's
	// expect timeout.
	SyncTimeout time.Duration
	// Prompt is the device's command prompt, such as "=> " for U-Boot; nil
	// when it has none. With a prompt, a send (not send_ctrl) waits until
	// the device is back at its prompt after the previous command, and a
	// send's expect ends at the next prompt: see Step.WaitPrompt and
	// Step.UntilPrompt. A prompt counts only at the start of a line. The
	// first send on a connection the run opened syncs first: it takes in
	// what the device printed, and unless that ends with the prompt, sends
	// the line ending and waits for it (SyncTimeout).
	Prompt *PatternSpec
	// Echo says the device echoes the text it receives, as shells do: a
	// text send waits for the echo of its line, checks it, and its expect
	// starts after it.
	Echo bool
	// Buffer is how many received bytes the device's console keeps for
	// matching, in bytes; 0 means stream.DefaultCapacity (1 MiB). A regexp
	// match can be at most this long.
	Buffer int
	// Implicit is true for a device made from a step's `to: /dev/...`.
	Implicit bool
	Pos      Pos
}

// USBMatch finds a serial port by USB identity. VID and PID are hex strings
// such as "0483"; Serial is optional.
type USBMatch struct {
	VID, PID, Serial string
}

// deviceKeys are the settings of a device.
var deviceKeys = []string{"port", "usb", "baud", "data_bits", "parity", "stop_bits", "flow_control", "line_ending", "dtr", "rts", "reconnect", "settle", "sync_timeout", "prompt", "echo", "buffer"}

// devices reads a devices section: names to a port path or settings.
func (d *decoder) devices(n *yaml.Node) {
	d.namedEntries(n, "devices", "device names to their settings", "device name", func(name string, p pair) {
		dev := &Device{Name: name, Pos: d.pos(p.key)}
		if p.val.Kind == yaml.ScalarNode && p.val.Tag != "!!null" {
			dev.Port = p.val.Value
			d.portURL(p.val)
		} else if p.val.Kind == yaml.MappingNode {
			d.device(dev, p.val)
		} else if p.val.Tag != "!!null" {
			d.add(d.pos(p.val), "device %s must be a port path or a mapping of settings, found %s", name, kindName(p.val))
		}
		if dev.Port != "" || dev.USB != nil {
			dev.PortFrom = dev.Pos.String()
		}
		d.seq.Devices = append(d.seq.Devices, dev)
	})
}

// portURL checks a port given as a URL (tcp://HOST:PORT or
// rfc2217://HOST:PORT); a device path is left to opening.
func (d *decoder) portURL(n *yaml.Node) {
	if err := CheckPortURL(n.Value); err != nil {
		d.add(d.pos(n), "%v", err)
	}
}

// device fills dev from a mapping node; used for sequence devices
// and bench-file bindings.
func (d *decoder) device(dev *Device, n *yaml.Node) {
	for _, p := range d.pairs(n) {
		switch p.key.Value {
		case "port":
			var ok bool
			if dev.Port, ok = d.str(p.val, "port"); ok {
				d.portURL(p.val)
			}
		case "usb":
			dev.USB = d.usb(p.val)
		case "baud":
			dev.Baud, _ = d.integer(p.val, "baud", 50, 20_000_000)
		case "data_bits":
			dev.DataBits, _ = d.integer(p.val, "data_bits", 5, 8)
		case "parity":
			dev.Parity = d.oneOf(p.val, "parity", "none", "odd", "even", "mark", "space")
		case "stop_bits":
			s, ok := d.text(p.val, "stop_bits")
			if ok && s != "1" && s != "1.5" && s != "2" {
				d.add(d.pos(p.val), "stop_bits must be 1, 1.5 or 2, found %s", s)
			}
			dev.StopBits = s
		case "flow_control":
			dev.FlowControl = d.oneOf(p.val, "flow_control", "none", "rtscts", "xonxoff")
		case "line_ending":
			dev.LineEnding = d.lineEnding(p.val)
		case "dtr":
			if b, ok := d.boolean(p.val, "dtr"); ok {
				dev.DTR = &b
			}
		case "rts":
			if b, ok := d.boolean(p.val, "rts"); ok {
				dev.RTS = &b
			}
		case "reconnect":
			dev.Reconnect, _ = d.boolean(p.val, "reconnect")
		case "settle":
			dev.Settle = d.settle(p.val)
		case "sync_timeout":
			dev.SyncTimeout, _ = d.durationIn(p.val, "sync_timeout", timeoutRange)
		case "prompt":
			dev.Prompt = d.pattern(p.val, "prompt", false)
		case "echo":
			dev.Echo, _ = d.boolean(p.val, "echo")
		case "buffer":
			dev.Buffer = d.bufferSize(p.val)
		default:
			d.unknownKey(p.key, "device "+dev.Name, deviceKeys)
		}
	}
}

// LineEndings are the accepted line_ending values.
var LineEndings = []string{"lf", "crlf", "cr", "none"}

// LineEndingBytes returns the bytes a line_ending value stands for.
func LineEndingBytes(s string) []byte {
	switch s {
	case "crlf":
		return []byte("\r\n")
	case "cr":
		return []byte("\r")
	case "none":
		return nil
	default:
		return []byte("\n")
	}
}

// lineEnding reads a line_ending value (see lineEndingValue).
func (d *decoder) lineEnding(n *yaml.Node) string {
	s, ok := d.str(n, "line_ending")
	if !ok {
		return ""
	}
	v, ok := lineEndingValue(s)
	if !ok {
		d.add(d.pos(n), "line_ending must be one of %s, found %q%s", strings.Join(LineEndings, ", "), s, suggest(s, LineEndings))
		return ""
	}
	return v
}

// hexIDRE is a USB vendor or product id.
var hexIDRE = regexp.MustCompile(`^(0x)?[0-9a-fA-F]{1,4}$`)

// usb reads usb: {vid, pid, serial}.
func (d *decoder) usb(n *yaml.Node) *USBMatch {
	if n.Kind != yaml.MappingNode {
		d.add(d.pos(n), "usb must be a mapping like {vid: \"0483\", pid: \"374b\", serial: \"...\"}, found %s", kindName(n))
		return nil
	}
	m := &USBMatch{}
	for _, p := range d.pairs(n) {
		switch p.key.Value {
		case "vid", "pid":
			s, ok := d.text(p.val, p.key.Value)
			if !ok {
				continue
			}
			if !hexIDRE.MatchString(s) {
				d.add(d.pos(p.val), "usb %s must be a 4-digit hex id like \"0483\", found %q", p.key.Value, s)
				continue
			}
			s = fmt.Sprintf("%04s", strings.ToLower(strings.TrimPrefix(strings.ToLower(s), "0x")))
			if p.key.Value == "vid" {
				m.VID = s
			} else {
				m.PID = s
			}
		case "serial":
			m.Serial, _ = d.text(p.val, "serial")
		default:
			d.unknownKey(p.key, "usb", []string{"vid", "pid", "serial"})
		}
	}
	if m.VID == "" || m.PID == "" {
		d.add(d.pos(n), "usb needs both vid and pid")
	}
	return m
}

// MinBuffer and MaxBuffer bound a device's buffer: size.
const (
	MinBuffer = 64 << 10
	MaxBuffer = 256 << 20
)

// sizeRE is a buffer size: a number of bytes, KiB or MiB.
var sizeRE = regexp.MustCompile(`^\s*([0-9]+)\s*(KiB|MiB)?\s*$`)

// bufferSize reads a size in bytes, from MinBuffer to MaxBuffer: a whole
// number of bytes, or one followed by KiB or MiB ("4MiB", "512 KiB").
func (d *decoder) bufferSize(n *yaml.Node) int {
	bad := func() int {
		d.add(d.pos(n), "buffer must be a size from 64KiB to 256MiB, such as 4MiB or 1048576 (bytes), found %s", n.Value)
		return 0
	}
	if n.Kind != yaml.ScalarNode {
		d.add(d.pos(n), "buffer must be a size such as 4MiB, found %s", kindName(n))
		return 0
	}
	m := sizeRE.FindStringSubmatch(n.Value)
	if m == nil || len(m[1]) > 10 {
		return bad()
	}
	v, _ := strconv.ParseInt(m[1], 10, 64)
	switch m[2] {
	case "KiB":
		v <<= 10
	case "MiB":
		v <<= 20
	}
	if v < MinBuffer || v > MaxBuffer {
		return bad()
	}
	return int(v)
}

// portPathRE is a serial port path: an absolute path (/dev/ttyUSB0),
// \\.\COM10 or COM3.
var portPathRE = regexp.MustCompile(`^(/|\\\\\.\\|COM[0-9]+$)`)

// IsPortPath reports whether a `to` value is a serial port path rather than
// a device name.
func IsPortPath(s string) bool { return portPathRE.MatchString(s) }

// resolveDevices gives every serial step its device: a declared name, a port
// path (an implicit device at 115200 8N1), or the only device there is.
func (v *validator) resolveDevices() {
	declared := len(v.seq.Devices)
	var walk func([]*Step)
	needDefault := []*Step{}
	walk = func(ss []*Step) {
		for _, s := range ss {
			if k, ok := LookupKind(s.Kind); ok && k.On == OnDevice {
				switch {
				case s.To == "":
					needDefault = append(needDefault, s)
				case v.seq.Device(s.To) != nil:
				case IsPortPath(s.To):
					v.seq.Devices = append(v.seq.Devices, &Device{Name: s.To, Port: s.To, Implicit: true, Pos: s.Pos})
				default:
					var names []string
					for _, d := range v.seq.Devices {
						names = append(names, d.Name)
					}
					v.add(s.Pos, "to: unknown device %q; devices are %s%s", s.To, listOrNone(names), suggest(s.To, names))
				}
			}
			walk(Children(s))
		}
	}
	walk(v.seq.Steps)
	walk(v.seq.Retry.Before())
	walk(v.seq.Finally)
	if len(needDefault) == 0 {
		return
	}
	var def string
	switch {
	case declared == 1:
		def = v.seq.Devices[0].Name
	case declared == 0 && len(v.seq.Devices) == 1:
		def = v.seq.Devices[0].Name
	case declared == 0 && len(v.seq.Devices) == 0:
		v.seq.Devices = append(v.seq.Devices, &Device{Name: DefaultDevice, Implicit: true, Pos: v.seq.Pos})
		def = DefaultDevice
	default:
		var names []string
		for _, d := range v.seq.Devices {
			names = append(names, d.Name)
		}
		for _, s := range needDefault {
			v.add(s.Pos, "this %s step needs to: because the sequence has several devices (%s)", s.Kind, strings.Join(names, ", "))
		}
		return
	}
	for _, s := range needDefault {
		s.To = def
	}
}

// deviceNames are the names of the sequence's devices, in order.
func deviceNames(seq *Sequence) []string {
	var names []string
	for _, d := range seq.Devices {
		names = append(names, d.Name)
	}
	return names
}

// listOrNone lists device names, or says there are none.
func listOrNone(names []string) string { return listOrNoneUnder(names, "devices") }

// listOrNoneUnder lists names, or says that there are none and which
// section of the sequence declares them.
func listOrNoneUnder(names []string, section string) string {
	if len(names) == 0 {
		return "none (declare them under " + section + ":)"
	}
	return strings.Join(names, ", ")
}

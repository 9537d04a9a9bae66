package steps

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// GDB attach modes (Probe.GDBAttach): how the target stands when hilrun
// attaches to its GDB remote stub, and so what hilrun leaves behind.
const (
	// GDBAttachAuto trusts the stub to say: QEMU's reports the stop its
	// attach caused, so a running guest is resumed; a stub that says
	// nothing is taken to hold a halted target, left halted.
	GDBAttachAuto = "auto"
	// GDBAttachRunning says the target ran before hilrun attached:
	// hilrun resumes it after attaching and after every access, and
	// detaches at the end so that it runs on. gdbserver --attach needs
	// it, since it stops the program without saying so.
	GDBAttachRunning = "running"
	// GDBAttachHalted says the target is halted and stays so until a
	// resume step.
	GDBAttachHalted = "halted"
)

// GDBAttachModes lists the attach modes a probe may name.
var GDBAttachModes = []string{GDBAttachRunning, GDBAttachHalted, GDBAttachAuto}

// gdbKeys are the keys of a probe's gdb: {...} mapping.
var gdbKeys = []string{"address", "attach"}

// ParseGDBTarget splits a GDB stub address as a flag gives it, ADDR or
// ADDR?attach=MODE, into the address and the attach mode ("" when the
// query names none). ADDR is HOST:PORT, a serial port or a Unix socket's
// path; MODE is running, halted or auto. Any other query key is an error,
// so that a misspelt one is not taken for part of the address.
func ParseGDBTarget(s string) (addr, attach string, err error) {
	addr, query, hasQuery := strings.Cut(s, "?")
	if !strings.Contains(addr, ":") && !strings.HasPrefix(addr, "/") {
		return "", "", fmt.Errorf("want HOST:PORT, like 127.0.0.1:1234, or the path of a serial port, like /dev/ttyACM0, or of a Unix socket, found %q", addr)
	}
	if !hasQuery {
		return addr, "", nil
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return "", "", fmt.Errorf("the settings after ? in %q: %w", s, err)
	}
	for _, k := range slices.Sorted(maps.Keys(q)) {
		if k != "attach" {
			return "", "", fmt.Errorf("unknown setting %q after ? in %q: the only one is attach=running|halted|auto%s", k, s, suggest(k, gdbKeys))
		}
	}
	if vs := q["attach"]; len(vs) > 0 {
		if len(vs) > 1 {
			return "", "", fmt.Errorf("attach is given %d times in %q", len(vs), s)
		}
		attach = vs[0]
		if !slices.Contains(GDBAttachModes, attach) {
			return "", "", fmt.Errorf("attach=%s in %q: want running, halted or auto%s", attach, s, suggest(attach, GDBAttachModes))
		}
	}
	return addr, attach, nil
}

// bindGDB binds p to the stub of a flag's value (ParseGDBTarget's form,
// checked already): an attach mode given replaces the probe's, and none
// keeps it.
func bindGDB(p *Probe, value string) {
	addr, attach, _ := ParseGDBTarget(value)
	p.AttachGDB(addr)
	if attach != "" {
		p.GDBAttach = attach
	}
}

// gdb decodes a probe's gdb: HOST:PORT, or {address: HOST:PORT, attach:
// MODE}.
func (d *decoder) gdb(pr *Probe, n *yaml.Node) {
	if n.Kind != yaml.MappingNode {
		s, ok := d.str(n, "gdb")
		if !ok || s == "" {
			return
		}
		if !d.gdbAddress(n, "gdb", s) {
			return
		}
		addr, attach, err := ParseGDBTarget(s)
		if err != nil {
			d.add(d.pos(n), "gdb: %v", err)
			return
		}
		pr.GDB, pr.GDBAttach = addr, attach
		return
	}
	hasAddress := false
	for _, p := range d.pairs(n) {
		switch p.key.Value {
		case "address":
			hasAddress = true
			if s, ok := d.str(p.val, "gdb address"); ok && d.gdbAddress(p.val, "gdb address", s) {
				pr.GDB = s
			}
		case "attach":
			pr.GDBAttach = d.oneOf(p.val, "attach", GDBAttachModes...)
		default:
			d.unknownKey(p.key, "gdb of probe "+pr.Name, gdbKeys)
		}
	}
	if !hasAddress {
		d.add(d.pos(n), "gdb of probe %s needs an address: {address: HOST:PORT, attach: %s}", pr.Name, GDBAttachRunning)
	}
}

// gdbAddress reports whether s, the value of key what, looks like the
// address of a GDB stub, and says what it should be when not.
func (d *decoder) gdbAddress(n *yaml.Node, what, s string) bool {
	if strings.Contains(s, ":") || strings.HasPrefix(s, "/") {
		return true
	}
	d.add(d.pos(n), "%s must be HOST:PORT of a GDB remote stub, like 127.0.0.1:1234, or the path of a serial port that speaks it, like /dev/ttyACM0 (a Black Magic Probe), found %q", what, s)
	return false
}

// The bench file bench discover writes: a device per console and a probe
// per debug probe, each found by its USB identity rather than by a path
// that changes when the board re-enumerates.

package usbsys

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// ConsoleName is the name of a board's i-th console (from 0) in the bench
// file: the board's name, then NAME_2, NAME_3, ...
func ConsoleName(b Board, i int) string {
	if i == 0 {
		return b.Name
	}
	return b.Name + "_" + strconv.Itoa(i+1)
}

// ProbeName is the name of a board's i-th probe (from 0), as ConsoleName.
func ProbeName(b Board, i int) string { return ConsoleName(b, i) }

// ByID is the stable path udev gives t under /dev/serial/by-id:
// usb-MANUFACTURER_PRODUCT_SERIAL-ifNN, with -port0 for a USB serial
// converter's tty (ttyUSB), each string with its spaces made underscores
// and the characters udev does not keep replaced.
func ByID(t TTY) string {
	d := t.Device
	vendor, model := udevString(d.Manufacturer), udevString(d.Product)
	if vendor == "" {
		vendor = d.VID
	}
	if model == "" {
		model = d.PID
	}
	id := vendor + "_" + model
	if s := udevString(d.Serial); s != "" {
		id += "_" + s
	}
	p := fmt.Sprintf("/dev/serial/by-id/usb-%s-if%02x", id, t.Interface.Number)
	if strings.HasPrefix(t.Name, "ttyUSB") {
		p += "-port0"
	}
	return p
}

// udevString is s as udev writes it in a by-id name: surrounding spaces
// dropped, each run of spaces one underscore, and every character but
// letters, digits, UTF-8 and #+-.:=@_ an underscore.
func udevString(s string) string {
	s = strings.Join(strings.Fields(s), "_")
	return strings.Map(func(r rune) rune {
		switch {
		case r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r)), strings.ContainsRune("#+-.:=@_", r):
			return r
		case r >= utf8.RuneSelf && r != utf8.RuneError:
			return r
		}
		return '_'
	}, s)
}

// WriteBench writes a bench file for boards to w: each console a device
// with a usb: {vid, pid, serial} matcher (or, when its USB device gives
// several ttys, which one matcher cannot tell apart, its /dev/serial/by-id
// path), each probe an OpenOCD launch for its interface and serial number
// (the target's config left for the user to add), or for a Black Magic
// Probe its GDB port. Comments say which board each entry is and why.
func WriteBench(w io.Writer, boards []Board) error {
	var b strings.Builder
	b.WriteString("# Written by hilrun bench discover from the USB devices attached. Each\n")
	b.WriteString("# console and probe is found by its USB identity, so the bench survives\n")
	b.WriteString("# re-enumeration. Rename the boards to the names your sequences use.\n")
	b.WriteString("devices:\n")
	consoles := 0
	for _, bd := range boards {
		for i, t := range bd.Consoles {
			comment(&b, ConsoleName(bd, i), bd.Reason)
			fmt.Fprintf(&b, "  %s:\n", ConsoleName(bd, i))
			writeConsole(&b, t)
			consoles++
		}
	}
	if consoles == 0 {
		b.WriteString("  {}\n")
	}
	probes := 0
	for _, bd := range boards {
		for i, p := range bd.Probes {
			if probes == 0 {
				b.WriteString("probes:\n")
			}
			comment(&b, ProbeName(bd, i), bd.Reason)
			fmt.Fprintf(&b, "  %s:\n", ProbeName(bd, i))
			writeProbe(&b, p)
			probes++
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func comment(b *strings.Builder, name, reason string) {
	fmt.Fprintf(b, "  # %s: %s.\n", name, reason)
}

func writeConsole(b *strings.Builder, t TTY) {
	d := t.Device
	if len(d.TTYs()) > 1 {
		fmt.Fprintf(b, "    # %s, interface %d of %d ttys on %s: one usb: matcher cannot tell them apart.\n", t.Name, t.Interface.Number, len(d.TTYs()), d.Name)
		fmt.Fprintf(b, "    port: %s\n", quote(ByID(t)))
		return
	}
	fmt.Fprintf(b, "    # %s on %s.", t.Name, d.Name)
	if d.Serial == "" {
		b.WriteString(" It has no serial number: the match holds while it is the only " + d.ID() + " plugged in.")
	}
	b.WriteString("\n")
	fmt.Fprintf(b, "    usb: {vid: %s, pid: %s", quote(d.VID), quote(d.PID))
	if d.Serial != "" {
		fmt.Fprintf(b, ", serial: %s", quote(d.Serial))
	}
	b.WriteString("}\n")
}

func writeProbe(b *strings.Builder, p Probe) {
	d := p.Device
	if p.Kind == BlackMagic {
		if p.HasGDB {
			fmt.Fprintf(b, "    # %s on %s: its GDB server is %s.\n", p.Kind, d.Name, p.GDB.Name)
			fmt.Fprintf(b, "    gdb: %s\n", quote(ByID(p.GDB)))
			return
		}
		fmt.Fprintf(b, "    # %s on %s gives no tty for its GDB server: is the cdc_acm driver loaded?\n", p.Kind, d.Name)
		b.WriteString("    gdb: /dev/ttyACM0\n")
		return
	}
	fmt.Fprintf(b, "    # %s on %s. Add the target's OpenOCD config after the interface's,\n", p.Kind, d.Name)
	b.WriteString("    # such as target/stm32f4x.cfg.\n")
	b.WriteString("    launch:\n")
	fmt.Fprintf(b, "      config: [%s]\n", p.Kind.OpenOCDInterface())
	if d.Serial != "" {
		fmt.Fprintf(b, "      adapter_serial: %s\n", quote(d.Serial))
	}
}

// quote is s as a YAML double-quoted string.
func quote(s string) string { return strconv.Quote(s) }

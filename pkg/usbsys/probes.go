// The debug probes hilrun knows by vendor and product ID, and how a bench
// file reaches each.

package usbsys

import "strings"

// ProbeKind is a family of debug probes.
type ProbeKind string

// The probe families bench discover finds.
const (
	STLink     ProbeKind = "ST-Link"
	JLink      ProbeKind = "J-Link"
	CMSISDAP   ProbeKind = "CMSIS-DAP"
	BlackMagic ProbeKind = "Black Magic Probe"
)

// OpenOCDInterface is the OpenOCD interface config of the family, ""
// for a Black Magic Probe, which speaks GDB's remote protocol itself.
func (k ProbeKind) OpenOCDInterface() string {
	switch k {
	case STLink:
		return "interface/stlink.cfg"
	case JLink:
		return "interface/jlink.cfg"
	case CMSISDAP:
		return "interface/cmsis-dap.cfg"
	}
	return ""
}

// probeIDs are the probes known by VID:PID; a "*" PID is every product
// of the vendor.
var probeIDs = map[string]ProbeKind{
	"0483:3744": STLink, // ST-Link/V1
	"0483:3748": STLink, // ST-Link/V2
	"0483:374a": STLink, // ST-Link/V2-1 (audio)
	"0483:374b": STLink, // ST-Link/V2-1
	"0483:374d": STLink, // STLINK-V3 loader
	"0483:374e": STLink, // STLINK-V3E
	"0483:374f": STLink, // STLINK-V3S
	"0483:3752": STLink, // ST-Link/V2-1 without mass storage
	"0483:3753": STLink, // STLINK-V3 with two VCPs
	"0483:3754": STLink, // STLINK-V3 without mass storage
	"0483:3757": STLink, // STLINK-V3PWR
	"1366:*":    JLink,  // SEGGER: J-Link and J-Link OB
	"1d50:6018": BlackMagic,
	"0d28:0204": CMSISDAP, // Arm DAPLink
	"2e8a:000c": CMSISDAP, // Raspberry Pi Debug Probe
	"1fc9:0143": CMSISDAP, // NXP MCU-Link
	"03eb:2141": CMSISDAP, // Microchip Atmel-ICE
	"c251:f001": CMSISDAP, // Keil ULINKplus
}

// ProbeOf says which debug probe d is: by its VID:PID, else a product or
// interface string naming CMSIS-DAP, as the CMSIS-DAP specification asks
// of every such probe. ok is false for a device that is no known probe.
func ProbeOf(d *Device) (kind ProbeKind, ok bool) {
	if k, ok := probeIDs[d.ID()]; ok {
		return k, true
	}
	if k, ok := probeIDs[d.VID+":*"]; ok {
		return k, true
	}
	if strings.Contains(d.Product, "CMSIS-DAP") {
		return CMSISDAP, true
	}
	for _, in := range d.Interfaces {
		if strings.Contains(in.Name, "CMSIS-DAP") {
			return CMSISDAP, true
		}
	}
	return "", false
}

// gdbTTY is the serial port a Black Magic Probe serves GDB's remote
// protocol on: the tty of its first interface that has one. ok is false
// for other probes, and for a probe without ttys.
func gdbTTY(d *Device, kind ProbeKind) (TTY, bool) {
	if kind != BlackMagic {
		return TTY{}, false
	}
	ttys := d.TTYs()
	if len(ttys) == 0 {
		return TTY{}, false
	}
	return ttys[0], true
}

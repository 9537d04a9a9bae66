package serialx

import (
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/hilrun/hilrun/pkg/usbsys"
)

// FindUSBIn is FindUSB over the USB serial ports of the sysfs tree fsys
// (rooted where /sys is), read by hilrun's own walker (pkg/usbsys): the
// live tree, or a recorded one.
func FindUSBIn(fsys fs.FS, vid, pid, serial string) (string, error) {
	ports, err := usbPorts(fsys)
	if err != nil {
		return "", err
	}
	return findUSB(ports, vid, pid, serial)
}

// usbPorts lists the USB serial ports of the sysfs tree fsys, sorted by
// path.
func usbPorts(fsys fs.FS) ([]PortInfo, error) {
	tree, err := usbsys.Scan(fsys)
	if err != nil {
		return nil, fmt.Errorf("list USB serial ports: %w", err)
	}
	var ports []PortInfo
	for _, t := range tree.TTYs() {
		d := t.Device
		ports = append(ports, PortInfo{Path: "/dev/" + t.Name, IsUSB: true, VID: d.VID, PID: d.PID, SerialNumber: d.Serial, Product: d.Product})
	}
	slices.SortFunc(ports, func(a, b PortInfo) int { return strings.Compare(a.Path, b.Path) })
	return ports, nil
}

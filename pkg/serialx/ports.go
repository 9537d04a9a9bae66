package serialx

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"go.bug.st/serial/enumerator"
)

// PortInfo describes a serial port found on the host.
type PortInfo struct {
	Path  string `json:"path"`
	IsUSB bool   `json:"usb"`
	// VID and PID are the USB vendor and product IDs as 4 lower-case hex
	// digits, SerialNumber and Product the USB strings; all "" when the
	// port is not USB or the OS does not say.
	VID          string `json:"vid,omitempty"`
	PID          string `json:"pid,omitempty"`
	SerialNumber string `json:"serial_number,omitempty"`
	Product      string `json:"product,omitempty"`
}

// ListPorts returns the serial ports of the host, sorted by path.
func ListPorts() ([]PortInfo, error) {
	list, err := enumerator.GetDetailedPortsList()
	if err != nil {
		return nil, fmt.Errorf("list serial ports: %w", err)
	}
	ports := make([]PortInfo, 0, len(list))
	for _, d := range list {
		ports = append(ports, PortInfo{
			Path:         d.Name,
			IsUSB:        d.IsUSB,
			VID:          strings.ToLower(d.VID),
			PID:          strings.ToLower(d.PID),
			SerialNumber: d.SerialNumber,
			Product:      d.Product,
		})
	}
	slices.SortFunc(ports, func(a, b PortInfo) int { return strings.Compare(a.Path, b.Path) })
	return ports, nil
}

func findUSB(ports []PortInfo, vid, pid, serial string) (string, error) {
	wantVID, err := parseID("vendor", vid)
	if err != nil {
		return "", err
	}
	wantPID, err := parseID("product", pid)
	if err != nil {
		return "", err
	}
	what := fmt.Sprintf("USB %04x:%04x", wantVID, wantPID)
	if serial != "" {
		what += fmt.Sprintf(" serial %q", serial)
	}
	var match []PortInfo
	for _, p := range ports {
		if !p.IsUSB {
			continue
		}
		v, err1 := strconv.ParseUint(p.VID, 16, 16)
		d, err2 := strconv.ParseUint(p.PID, 16, 16)
		if err1 != nil || err2 != nil || v != wantVID || d != wantPID {
			continue
		}
		if serial != "" && !strings.EqualFold(p.SerialNumber, serial) {
			continue
		}
		match = append(match, p)
	}
	switch len(match) {
	case 1:
		return match[0].Path, nil
	case 0:
		return "", fmt.Errorf("find serial port %s: none found (%s)", what, describePorts(ports, "ports"))
	}
	return "", fmt.Errorf("find serial port %s: %d match (%s); give a serial number to choose", what, len(match), describePorts(match, "matching"))
}

func parseID(kind, s string) (uint64, error) {
	t := strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "0x")
	v, err := strconv.ParseUint(t, 16, 16)
	if err != nil {
		return 0, fmt.Errorf("find serial port: invalid USB %s ID %q (want 4 hex digits, like 2e8a)", kind, s)
	}
	return v, nil
}

func describePorts(ports []PortInfo, label string) string {
	if len(ports) == 0 {
		return "no serial ports on this host"
	}
	parts := make([]string, 0, len(ports))
	for _, p := range ports {
		s := p.Path
		switch {
		case !p.IsUSB:
			s += " not USB"
		default:
			s += " " + strings.ToLower(p.VID) + ":" + strings.ToLower(p.PID)
			if p.SerialNumber != "" {
				s += fmt.Sprintf(" serial %q", p.SerialNumber)
			}
			if p.Product != "" {
				s += fmt.Sprintf(" %q", p.Product)
			}
		}
		parts = append(parts, s)
	}
	return label + ": " + strings.Join(parts, ", ")
}

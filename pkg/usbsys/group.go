// Boards: the serial consoles and debug probes that belong to one
// physical board, and why hilrun thinks so.

package usbsys

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Board is the consoles and probes of one physical board, as far as the
// USB tree tells.
type Board struct {
	// Name is board1, board2, ... in bus order of the boards' first
	// devices.
	Name string
	// Reason says, in one line, why these consoles and probes make one
	// board.
	Reason string
	// Devices are the USB devices the board's consoles and probes are
	// on, in bus order.
	Devices []*Device
	// Consoles are the board's serial consoles: every tty of its devices
	// but a Black Magic Probe's GDB port.
	Consoles []TTY
	// Probes are the board's debug probes.
	Probes []Probe
}

// Probe is one debug probe.
type Probe struct {
	Kind   ProbeKind
	Device *Device
	// GDB is the port a Black Magic Probe serves GDB's remote protocol
	// on; HasGDB says whether there is one.
	GDB    TTY
	HasGDB bool
}

// unit is one device that gives consoles, a probe or both.
type unit struct {
	dev      *Device
	consoles []TTY
	probe    *Probe
}

// Boards groups the consoles and probes of t into boards: the consoles and
// probe of one USB device make a board (a Nucleo's ST-Link gives both);
// else a console and a probe that are the only devices behind a hub, and
// no two of one kind, make one (an adapter and a probe wired to one
// board through a hub of its own); every other device is a board of its
// own.
func Boards(t *Tree) []Board {
	var units []*unit
	byDev := map[*Device]*unit{}
	for _, d := range t.Devices {
		if u := unitOf(d); u != nil {
			units = append(units, u)
			byDev[d] = u
		}
	}
	var boards []Board
	done := map[*unit]bool{}
	for _, u := range units {
		if u.probe != nil && len(u.consoles) > 0 {
			boards = append(boards, boardOf("the console and the probe are interfaces of one USB device, "+describe(u.dev), u))
			done[u] = true
		}
	}
	for _, hub := range t.Devices {
		if !hub.IsHub() || hub.IsRootHub() {
			continue
		}
		if us, ok := hubBoard(t.Children(hub.Name), byDev, done); ok {
			boards = append(boards, boardOf("the only devices behind hub "+describe(hub), us...))
			for _, u := range us {
				done[u] = true
			}
		}
	}
	for _, u := range units {
		if done[u] {
			continue
		}
		reason := "a console with no probe beside it: none on its USB device, " + describe(u.dev) + ", nor alone with it behind a hub"
		switch {
		case u.probe != nil:
			reason = "a probe with no console beside it: none on its USB device, " + describe(u.dev) + ", nor alone with it behind a hub"
		case len(u.consoles) > 1:
			reason = "the consoles are interfaces of one USB device, " + describe(u.dev) + "; no probe is on it nor alone with it behind a hub"
		}
		boards = append(boards, boardOf(reason, u))
	}
	slices.SortStableFunc(boards, func(a, b Board) int { return Compare(a.Devices[0].Name, b.Devices[0].Name) })
	for i := range boards {
		boards[i].Name = "board" + strconv.Itoa(i+1)
	}
	return boards
}

// unitOf returns what d gives, or nil when it gives no console or probe.
func unitOf(d *Device) *unit {
	if d.IsHub() {
		return nil
	}
	u := &unit{dev: d}
	if kind, ok := ProbeOf(d); ok {
		u.probe = &Probe{Kind: kind, Device: d}
		u.probe.GDB, u.probe.HasGDB = gdbTTY(d, kind)
	}
	for _, t := range d.TTYs() {
		if u.probe != nil && u.probe.HasGDB && t.Name == u.probe.GDB.Name {
			continue
		}
		u.consoles = append(u.consoles, t)
	}
	if u.probe == nil && len(u.consoles) == 0 {
		return nil
	}
	return u
}

// hubBoard says whether the devices behind one hub make one board: each
// gives a console or a probe and is no board of its own yet, there are
// consoles and probes among them, and no two are the same product (two
// of one product are more likely two boards).
func hubBoard(kids []*Device, byDev map[*Device]*unit, done map[*unit]bool) ([]*unit, bool) {
	if len(kids) < 2 {
		return nil, false
	}
	var us []*unit
	ids := map[string]bool{}
	probes, consoles := 0, 0
	for _, k := range kids {
		u := byDev[k]
		if u == nil || done[u] || ids[k.ID()] {
			return nil, false
		}
		ids[k.ID()] = true
		if u.probe != nil {
			probes++
		}
		if len(u.consoles) > 0 {
			consoles++
		}
		us = append(us, u)
	}
	return us, probes > 0 && consoles > 0
}

func boardOf(reason string, us ...*unit) Board {
	b := Board{Reason: reason}
	for _, u := range us {
		b.Devices = append(b.Devices, u.dev)
		b.Consoles = append(b.Consoles, u.consoles...)
		if u.probe != nil {
			b.Probes = append(b.Probes, *u.probe)
		}
	}
	return b
}

// describe names a device for a reader: 1-1 (0483:374b STMicroelectronics
// STM32 STLink).
func describe(d *Device) string {
	s := []string{d.ID()}
	for _, v := range []string{d.Manufacturer, d.Product} {
		if v != "" {
			s = append(s, v)
		}
	}
	return fmt.Sprintf("%s (%s)", d.Name, strings.Join(s, " "))
}

// Package usbsys reads the USB devices of a Linux host, their interfaces
// and the serial ports they give, from a sysfs tree: the live /sys or a
// recorded one. It reads through an fs.FS rooted at the tree (os.DirFS of
// /sys, or of a folder holding a recording) and follows sysfs's symbolic
// links itself, so a recorded tree reads exactly as the live one does.
//
// It walks bus/usb/devices (a link per device and per interface) and
// class/tty (a link per tty, into the interface that gives it).
package usbsys

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Limits on what Scan reads, so that a strange tree cannot exhaust memory.
const (
	// maxAttr bounds one attribute file; sysfs serves at most a page.
	maxAttr = 4096
	// maxEntries bounds the entries of bus/usb/devices and class/tty.
	maxEntries = 16384
)

// Device is one USB device: a hub, a probe, a serial adapter or anything
// else on the bus.
type Device struct {
	// Name is the kernel's name of the device: "usb1" for a root hub,
	// BUS-PORT[.PORT...] below it, such as "1-2.1".
	Name string
	// Path is the device's folder in the tree, such as
	// "devices/pci0000:00/0000:00:14.0/usb1/1-2/1-2.1".
	Path string
	// Parent is the Name of the hub the device hangs off ("" for a root
	// hub).
	Parent string
	// VID and PID are the vendor and product IDs, 4 lower-case hex digits.
	VID, PID string
	// Class is bDeviceClass, 2 hex digits; "09" is a hub.
	Class string
	// Manufacturer, Product and Serial are the device's strings; "" when
	// it has none.
	Manufacturer, Product, Serial string
	// Interfaces are the device's interfaces, by number.
	Interfaces []*Interface
}

// Interface is one interface of a USB device.
type Interface struct {
	// Number is bInterfaceNumber.
	Number int
	// Class is bInterfaceClass, 2 hex digits ("02" CDC, "ff" vendor).
	Class string
	// Name is the interface's string; "" when it has none.
	Name string
	// TTYs are the serial ports the interface gives, such as "ttyACM0",
	// sorted.
	TTYs []string
}

// IsHub says whether d is a hub, a root hub included.
func (d *Device) IsHub() bool { return d.Class == "09" }

// IsRootHub says whether d is a host controller's root hub.
func (d *Device) IsRootHub() bool { return d.Parent == "" }

// ID is "vid:pid".
func (d *Device) ID() string { return d.VID + ":" + d.PID }

// TTYs lists the serial ports of all d's interfaces, by interface number.
func (d *Device) TTYs() []TTY {
	var out []TTY
	for _, in := range d.Interfaces {
		for _, t := range in.TTYs {
			out = append(out, TTY{Name: t, Device: d, Interface: in})
		}
	}
	return out
}

// TTY is one serial port of a USB device.
type TTY struct {
	// Name is the tty's name, such as "ttyACM0"; its device file is
	// /dev/NAME.
	Name      string
	Device    *Device
	Interface *Interface
}

// Tree is what Scan found.
type Tree struct {
	// Devices are every USB device, root hubs included, in bus order
	// (see Less).
	Devices []*Device
}

// Device returns the device called name, or nil.
func (t *Tree) Device(name string) *Device {
	for _, d := range t.Devices {
		if d.Name == name {
			return d
		}
	}
	return nil
}

// Children returns the devices that hang off the hub called name.
func (t *Tree) Children(name string) []*Device {
	var out []*Device
	for _, d := range t.Devices {
		if d.Parent == name {
			out = append(out, d)
		}
	}
	return out
}

// TTYs lists every USB serial port, in bus order.
func (t *Tree) TTYs() []TTY {
	var out []TTY
	for _, d := range t.Devices {
		out = append(out, d.TTYs()...)
	}
	return out
}

// Scan reads the USB devices of the sysfs tree fsys (rooted where /sys is).
// fsys must be able to read links (fs.ReadLinkFS, as os.DirFS is). A tree
// without bus/usb/devices has no USB devices, which is no error; a tree
// whose files cannot be read is.
func Scan(fsys fs.FS) (*Tree, error) {
	t := &Tree{}
	entries, err := readDir(fsys, "bus/usb/devices")
	if err != nil {
		return nil, err
	}
	byName := map[string]*Device{}
	var intfs []string
	for _, name := range entries {
		if strings.Contains(name, ":") {
			intfs = append(intfs, name)
			continue
		}
		d, err := readDevice(fsys, name)
		if err != nil {
			return nil, err
		}
		byName[d.Name] = d
		t.Devices = append(t.Devices, d)
	}
	for _, name := range intfs {
		dev, _, _ := strings.Cut(name, ":")
		d := byName[dev]
		if d == nil || strings.HasSuffix(dev, "-0") {
			continue // a root hub's own interface ("1-0:1.0"), or a stray link
		}
		in, err := readInterface(fsys, name)
		if err != nil {
			return nil, err
		}
		d.Interfaces = append(d.Interfaces, in)
	}
	if err := scanTTYs(fsys, byName); err != nil {
		return nil, err
	}
	for _, d := range t.Devices {
		slices.SortFunc(d.Interfaces, func(a, b *Interface) int { return cmp.Compare(a.Number, b.Number) })
		for _, in := range d.Interfaces {
			slices.Sort(in.TTYs)
		}
	}
	slices.SortFunc(t.Devices, func(a, b *Device) int { return Compare(a.Name, b.Name) })
	return t, nil
}

// readDevice reads the device the link bus/usb/devices/NAME leads to.
func readDevice(fsys fs.FS, name string) (*Device, error) {
	dir, err := resolve(fsys, "bus/usb/devices/"+name)
	if err != nil {
		return nil, err
	}
	d := &Device{Name: name, Path: dir}
	if parent := path.Base(path.Dir(dir)); !strings.HasPrefix(name, "usb") {
		d.Parent = parent
	}
	for _, a := range []struct {
		file string
		to   *string
		need bool
	}{
		{"idVendor", &d.VID, true}, {"idProduct", &d.PID, true}, {"bDeviceClass", &d.Class, false},
		{"manufacturer", &d.Manufacturer, false}, {"product", &d.Product, false}, {"serial", &d.Serial, false},
	} {
		v, err := attr(fsys, dir+"/"+a.file)
		if err != nil && (a.need || !errors.Is(err, fs.ErrNotExist)) {
			return nil, fmt.Errorf("read USB device %s: %w", name, err)
		}
		*a.to = v
	}
	d.VID, d.PID, d.Class = strings.ToLower(d.VID), strings.ToLower(d.PID), strings.ToLower(d.Class)
	return d, nil
}

// readInterface reads the interface the link bus/usb/devices/NAME leads to.
func readInterface(fsys fs.FS, name string) (*Interface, error) {
	dir, err := resolve(fsys, "bus/usb/devices/"+name)
	if err != nil {
		return nil, err
	}
	num, err := attr(fsys, dir+"/bInterfaceNumber")
	if err != nil {
		return nil, fmt.Errorf("read USB interface %s: %w", name, err)
	}
	n, err := strconv.ParseUint(num, 16, 8)
	if err != nil {
		return nil, fmt.Errorf("read USB interface %s: bInterfaceNumber %q is not a hex byte", name, num)
	}
	in := &Interface{Number: int(n)}
	for _, a := range []struct {
		file string
		to   *string
	}{{"bInterfaceClass", &in.Class}, {"interface", &in.Name}} {
		v, err := attr(fsys, dir+"/"+a.file)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("read USB interface %s: %w", name, err)
		}
		*a.to = v
	}
	in.Class = strings.ToLower(in.Class)
	return in, nil
}

// scanTTYs gives each interface the ttys whose class/tty link leads into
// it: .../1-1/1-1:1.1/tty/ttyACM0 or .../1-2.1/1-2.1:1.0/ttyUSB0/tty/ttyUSB0.
// ttys of no USB interface (ttyS0, tty0) are left out.
func scanTTYs(fsys fs.FS, byName map[string]*Device) error {
	ttys, err := readDir(fsys, "class/tty")
	if err != nil {
		return err
	}
	for _, name := range ttys {
		dir, err := resolve(fsys, "class/tty/"+name)
		if err != nil {
			return err
		}
		parts := strings.Split(dir, "/")
		for i := len(parts) - 1; i >= 0; i-- {
			dev, cfg, ok := strings.Cut(parts[i], ":")
			d := byName[dev]
			if !ok || d == nil || cfg == "" {
				continue
			}
			num, err := attr(fsys, strings.Join(parts[:i+1], "/")+"/bInterfaceNumber")
			if err != nil {
				break
			}
			n, _ := strconv.ParseUint(num, 16, 8)
			for _, in := range d.Interfaces {
				if in.Number == int(n) {
					in.TTYs = append(in.TTYs, name)
				}
			}
			break
		}
	}
	return nil
}

// readDir lists the names in dir, sorted; a missing dir is empty.
func readDir(fsys fs.FS, dir string) ([]string, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", dir, err)
	}
	if len(entries) > maxEntries {
		return nil, fmt.Errorf("read %s: %d entries, more than the %d hilrun reads", dir, len(entries), maxEntries)
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names, nil
}

// resolve follows the link name (a path in fsys) and returns where it
// leads, as a clean path in fsys. A name that is no link is returned
// as it is.
func resolve(fsys fs.FS, name string) (string, error) {
	fi, err := fs.Lstat(fsys, name)
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	if fi.Mode()&fs.ModeSymlink == 0 {
		return name, nil
	}
	target, err := fs.ReadLink(fsys, name)
	if err != nil {
		return "", fmt.Errorf("read link %s: %w", name, err)
	}
	if path.IsAbs(target) {
		return "", fmt.Errorf("read link %s: it leads to %s, an absolute path; sysfs links are relative", name, target)
	}
	p := path.Join(path.Dir(name), target)
	if !fs.ValidPath(p) {
		return "", fmt.Errorf("read link %s: it leads to %s, out of the tree", name, target)
	}
	return p, nil
}

// attr reads a one-line attribute file, without its line end.
func attr(fsys fs.FS, name string) (string, error) {
	f, err := fsys.Open(name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxAttr+1))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", name, err)
	}
	if len(b) > maxAttr {
		return "", fmt.Errorf("read %s: longer than %d bytes, which no sysfs attribute is", name, maxAttr)
	}
	return strings.TrimRight(string(b), "\n"), nil
}

// Compare orders device names in bus order: bus by number, then each
// port by number, so 1-2 < 1-2.1 < 1-2.10 < 1-10 and usb1 < 1-1.
func Compare(a, b string) int {
	ka, kb := sortKey(a), sortKey(b)
	return slices.Compare(ka, kb)
}

func sortKey(name string) []int {
	if n, ok := strings.CutPrefix(name, "usb"); ok {
		v, _ := strconv.Atoi(n)
		return []int{v, -1}
	}
	var key []int
	for _, f := range strings.FieldsFunc(name, func(r rune) bool { return r == '-' || r == '.' }) {
		v, err := strconv.Atoi(f)
		if err != nil {
			v = 1 << 30
		}
		key = append(key, v)
	}
	return key
}

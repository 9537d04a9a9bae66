// Package usbsystest builds sysfs trees from recordings, for tests of
// hilrun's USB walker and of bench discover.
//
// A recording is a text file, one entry a line:
//
//	devices/pci0000:00/0000:00:14.0/usb1/1-1/idVendor = 0483
//	class/tty/ttyACM0 -> ../../devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.1/tty/ttyACM0
//
// PATH = VALUE is a file holding VALUE and a line end, PATH -> TARGET a
// symbolic link; paths are relative to /sys. Blank lines and lines
// starting with # are comments. Recordings are text rather than trees of
// files because sysfs names hold colons, which a Go module's files may
// not.
package usbsystest

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Build makes the tree the recording data describes under dir (which
// must exist), and returns dir.
func Build(dir string, data []byte) (string, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := entry(dir, line); err != nil {
			return "", fmt.Errorf("line %d: %w", n, err)
		}
	}
	return dir, sc.Err()
}

// BuildFile is Build with the recording in the file name.
func BuildFile(dir, name string) (string, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return "", err
	}
	d, err := Build(dir, data)
	if err != nil {
		return "", fmt.Errorf("%s: %w", name, err)
	}
	return d, nil
}

func entry(dir, line string) error {
	if name, target, ok := strings.Cut(line, " -> "); ok {
		p, err := place(dir, name)
		if err != nil {
			return err
		}
		return os.Symlink(target, p)
	}
	name, value, ok := strings.Cut(line, " = ")
	if !ok {
		if name, ok = strings.CutSuffix(line, " ="); !ok {
			return fmt.Errorf("want PATH = VALUE or PATH -> TARGET, found %q", line)
		}
	}
	p, err := place(dir, name)
	if err != nil {
		return err
	}
	return os.WriteFile(p, []byte(value+"\n"), 0o644)
}

// place makes the folders of name under dir and returns its path.
func place(dir, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", fmt.Errorf("path %q: want a relative path inside the tree", name)
	}
	p := filepath.Join(dir, filepath.FromSlash(name))
	return p, os.MkdirAll(filepath.Dir(p), 0o755)
}

//go:build unix && !linux

package serialx

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// macPty matches the pty slaves of macOS, /dev/ttys000; its serial ports
// are /dev/tty.NAME and /dev/cu.NAME.
var macPty = regexp.MustCompile(`^/dev/ttys[0-9]+$`)

// ptyDevice reports whether path (or the file a symlink at path names) is
// the slave side of a pseudo-terminal, by its name: /dev/pts/N on the BSDs,
// /dev/ttysNNN on macOS.
func ptyDevice(path string) bool {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return false
	}
	return strings.HasPrefix(real, "/dev/pts/") || macPty.MatchString(real)
}

// flockHolder is not known outside Linux.
func flockHolder(os.FileInfo) int { return 0 }

package serialx

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// maxHolders bounds the processes named in a "port busy" message.
const maxHolders = 3

// holders names the processes that have path open, "PID 4711, picocom",
// by looking through /proc. It is best effort: processes of other users
// are invisible without privileges, and it returns "" when none is found.
func holders(path string) string {
	target, err := filepath.EvalSymlinks(path)
	if err != nil {
		target = path
	}
	procs, err := os.ReadDir("/proc")
	if err != nil {
		return ""
	}
	var found []string
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil {
			continue
		}
		fds, err := os.ReadDir(filepath.Join("/proc", p.Name(), "fd"))
		if err != nil {
			continue
		}
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join("/proc", p.Name(), "fd", fd.Name()))
			if err != nil || (link != target && link != path) {
				continue
			}
			comm, _ := os.ReadFile(filepath.Join("/proc", p.Name(), "comm"))
			if name := strings.TrimSpace(string(comm)); name != "" {
				found = append(found, fmt.Sprintf("PID %d, %s", pid, name))
			} else {
				found = append(found, fmt.Sprintf("PID %d", pid))
			}
			break
		}
		if len(found) == maxHolders {
			break
		}
	}
	return strings.Join(found, "; ")
}

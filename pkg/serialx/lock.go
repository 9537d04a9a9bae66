package serialx

import (
	"encoding/binary"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// defaultLockDirs are where Open looks for the UUCP lock directory when
// Config.LockDir is empty, in order: /var/lock is what the FHS, lockdev,
// minicom and picocom's UUCP_LOCK_DIR use; on current Debian and Ubuntu it
// is a symlink to /run/lock (mode 1777), which is listed for systems without
// the symlink. /tmp is deliberately absent: no other program looks for
// serial port locks there, so a lock in /tmp would protect nothing.
var defaultLockDirs = []string{"/var/lock", "/run/lock"}

// lockName returns the UUCP lock file name of the serial device at path,
// "LCK..ttyUSB0" for /dev/ttyUSB0, as minicom and picocom name it: the base
// name of the device. Symlinks (/dev/serial/by-id/..., a socat link) are
// resolved first, so that every name of one device maps to one lock. It
// returns false when path does not exist.
func lockName(path string) (string, bool) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", false
	}
	base := filepath.Base(real)
	if base == "." || base == "/" || base == "" {
		return "", false
	}
	return "LCK.." + base, true
}

// formatLockPID returns lock file content in the HDB UUCP format: the PID as
// ASCII decimal right-aligned in 10 characters, then a newline.
func formatLockPID(pid int) []byte {
	return fmt.Appendf(nil, "%10d\n", pid)
}

// parseLockPID reads the PID from lock file content: HDB ASCII ("      4711\n",
// also without padding or newline) or the old binary format, a 4-byte
// native-endian int (Kermit, early UUCP). It returns 0 when b holds neither.
func parseLockPID(b []byte) int {
	if s := strings.TrimSpace(string(b)); s != "" {
		if pid, err := strconv.Atoi(s); err == nil && pid > 0 {
			return pid
		}
	}
	if len(b) == 4 {
		if pid := int(int32(binary.NativeEndian.Uint32(b))); pid > 0 {
			return pid
		}
	}
	return 0
}

// lockHeldError is the cause of a Busy *OpenError for a port whose lock
// file names a live process: "held by PID 4711 (picocom), lock file
// /var/lock/LCK..ttyUSB0".
type lockHeldError struct {
	pid      int
	command  string // from /proc/PID/comm; "" when unknown
	lockFile string
}

func (e *lockHeldError) Error() string {
	if e.pid == 0 {
		return "locked by " + e.lockFile + ", which holds no PID yet"
	}
	s := "held by PID " + strconv.Itoa(e.pid)
	if e.command != "" {
		s += " (" + e.command + ")"
	}
	return s + ", lock file " + e.lockFile
}

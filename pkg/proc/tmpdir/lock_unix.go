//go:build unix

package tmpdir

import (
	"os"
	"syscall"
)

// lock takes an exclusive lock on f, waiting for it when wait is true; the
// kernel drops it when the process ends, however it ends.
func lock(f *os.File, wait bool) error {
	how := syscall.LOCK_EX
	if !wait {
		how |= syscall.LOCK_NB
	}
	return syscall.Flock(int(f.Fd()), how)
}

// ownedByMe reports whether path belongs to this process's user.
func ownedByMe(path string) bool {
	fi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid() && fi.Mode()&os.ModeSymlink == 0
}

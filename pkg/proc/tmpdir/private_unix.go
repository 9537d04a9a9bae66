//go:build unix

package tmpdir

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// noFollow makes open fail on a link (ELOOP) instead of following it.
const noFollow = syscall.O_NOFOLLOW

// unsafeFolder says why the folder fi describes (from Lstat) is not
// private to this user, "" when it is.
func unsafeFolder(fi fs.FileInfo) string {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return "it is a link"
	case !fi.IsDir():
		return "it is not a folder"
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
		owner := "another user"
		if ok {
			owner = fmt.Sprintf("user %d", st.Uid)
		}
		return "it belongs to " + owner
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		return fmt.Sprintf("its mode is %#o, not 0700", perm)
	}
	return ""
}

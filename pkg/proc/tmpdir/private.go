package tmpdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/hilrun/hilrun/pkg/gate/environ"
)

// ErrUnsafe is wrapped by the errors of Private and RuntimeDir for a
// folder that someone other than this user could write to or swap.
var ErrUnsafe = errors.New("not private to this user")

// RuntimeDir is hilrun's private folder for the lock files that
// processes of one user share (the pool's benches): hilrun/ under
// $XDG_RUNTIME_DIR of env, which the system keeps private to the user and
// empties at logout, else hilrun-UID/ under os.TempDir(). Private makes
// and checks it, so another local user can neither plant files or links
// in it nor read who holds what.
func RuntimeDir(env environ.Env) (string, error) {
	dir := filepath.Join(os.TempDir(), "hilrun-"+strconv.Itoa(os.Getuid()))
	if x := env.Get("XDG_RUNTIME_DIR"); x != "" {
		dir = filepath.Join(x, "hilrun")
	}
	if err := Private(dir); err != nil {
		return "", err
	}
	return dir, nil
}

// Private makes the folder path with mode 0700 when it is missing, and
// then checks that it is a folder, not a link, owned by this user, with
// mode 0700. A folder that fails the check is refused, never repaired: a
// folder in a shared place that someone else made first may already hold
// their links. The error wraps ErrUnsafe and says how to get out of it.
func Private(path string) error {
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		err = os.Mkdir(path, 0o700)
		if err == nil {
			// The umask may have taken bits away; the folder is ours.
			err = os.Chmod(path, 0o700)
		} else if errors.Is(err, fs.ErrExist) {
			err = nil // made by another hilrun just now: check it below
		}
		if err == nil {
			fi, err = os.Lstat(path)
		}
	}
	if err != nil {
		return fmt.Errorf("make the private folder %s: %w", path, err)
	}
	if why := unsafeFolder(fi); why != "" {
		return fmt.Errorf("refuse the folder %s: %s, so it is %w (another user could put files or links in it); remove it and hilrun makes it again with mode 0700, or set XDG_RUNTIME_DIR to a folder of your own",
			path, why, ErrUnsafe)
	}
	return nil
}

// OpenLock opens the lock file path for reading and writing, making it
// with mode 0600 when it is missing. It never follows a link, so a link
// planted where the lock file should be cannot make hilrun write to the
// file it points at.
func OpenLock(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|noFollow, 0o600)
}

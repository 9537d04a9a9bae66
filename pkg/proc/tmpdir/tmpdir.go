// Package tmpdir makes hilrun's private temporary folders so that a hilrun
// killed without a chance to clean up (SIGKILL, a crash, a power cut) does
// not leave them behind for good: each folder holds a lock that its
// process keeps while it lives, and Sweep, which hilrun runs when it
// starts, removes the folders whose process is gone.
package tmpdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ownerFile is the file in each folder whose lock says its process lives.
const ownerFile = ".hilrun-owner"

// Prefix starts the name of every folder New makes in os.TempDir().
const Prefix = "hilrun-"

// Dir is a private temporary folder that its process holds.
type Dir struct {
	Path string
	lock *os.File
}

// New makes a private folder (mode 0700) in os.TempDir() named
// Prefix+kind+"-"+random, and holds it until Remove or the process ends.
func New(kind string) (*Dir, error) {
	path, err := os.MkdirTemp("", Prefix+kind+"-")
	if err != nil {
		return nil, fmt.Errorf("create a temporary folder: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(path, ownerFile), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		err = lock(f, true)
		if err != nil {
			f.Close()
		}
	}
	if err != nil {
		os.RemoveAll(path)
		return nil, fmt.Errorf("hold the temporary folder %s: %w", path, err)
	}
	fmt.Fprintf(f, "%d\n", os.Getpid())
	return &Dir{Path: path, lock: f}, nil
}

// Remove deletes the folder and everything in it; it is idempotent.
func (d *Dir) Remove() error {
	if d == nil || d.lock == nil {
		return nil
	}
	err := os.RemoveAll(d.Path)
	d.lock.Close()
	d.lock = nil
	return err
}

// orphanAge is how old a folder New would have made, empty, without its
// owner file, must be for Sweep to take it for one whose process was
// killed between making it and holding it, rather than one New is making
// right now.
const orphanAge = time.Minute

// Sweep removes the folders New made in os.TempDir() whose process is gone
// (nobody holds their lock), and the empty ones older than orphanAge whose
// process was killed before it could hold them. Folders of other users,
// and other folders without the owner file, are left alone. It returns the
// folders it removed.
func Sweep() ([]string, error) {
	base := os.TempDir()
	entries, err := os.ReadDir(base)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", base, err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), Prefix) {
			continue
		}
		path := filepath.Join(base, e.Name())
		if !ownedByMe(path) {
			continue
		}
		f, err := os.OpenFile(filepath.Join(path, ownerFile), os.O_RDWR, 0)
		if errors.Is(err, fs.ErrNotExist) && orphaned(path) {
			// Remove takes only an empty folder: one whose owner file
			// has just come stays.
			if os.Remove(path) == nil {
				removed = append(removed, path)
			}
			continue
		}
		if err != nil {
			continue
		}
		if lock(f, false) != nil {
			// Its process lives.
			f.Close()
			continue
		}
		err = os.RemoveAll(path)
		f.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("remove the stale folder %s: %w", path, err))
			continue
		}
		removed = append(removed, path)
	}
	return removed, errors.Join(errs...)
}

// orphaned reports whether path was last changed orphanAge ago or more.
func orphaned(path string) bool {
	fi, err := os.Lstat(path)
	return err == nil && time.Since(fi.ModTime()) >= orphanAge
}

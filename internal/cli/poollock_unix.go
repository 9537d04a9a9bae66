//go:build unix

package cli

import (
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/proc/tmpdir"
)

// poolLockDir is where the lock files of pool benches live: hilrun's
// private runtime folder (tmpdir.RuntimeDir), refused when another user
// could reach it.
func poolLockDir() (string, error) {
	dir, err := tmpdir.RuntimeDir(environ.Host())
	if err != nil {
		return "", fmt.Errorf("the folder for the pool's lock files: %w", err)
	}
	return dir, nil
}

// errBenchBusy is wrapped by tryLockBench's error when another process
// holds the bench.
var errBenchBusy = errors.New("bench busy")

// tryLockBench takes, without waiting, an exclusive flock(2) on the lock
// file of each key (a port of the bench) in dir, in order, and writes this
// process's id into each. The kernel drops the locks when the process
// ends, however it ends, so a killed run never leaves a bench held. When
// another process holds one, the error wraps errBenchBusy and names that
// process; nothing stays locked.
func tryLockBench(dir string, keys []string) (*benchLock, error) {
	l := &benchLock{}
	for _, key := range keys {
		path := filepath.Join(dir, "pool-"+lockName(key)+".lock")
		f, err := tmpdir.OpenLock(path)
		if err != nil {
			l.unlock()
			return nil, fmt.Errorf("open the lock file %s: %w", path, err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			pid := make([]byte, 32)
			n, _ := f.ReadAt(pid, 0)
			pid = pid[:n]
			f.Close()
			l.unlock()
			if errors.Is(err, syscall.EWOULDBLOCK) {
				holder := strings.TrimSpace(string(pid))
				if holder == "" {
					holder = "?"
				}
				return nil, fmt.Errorf("%s is held by process %s (%s): %w", key, holder, path, errBenchBusy)
			}
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		l.files = append(l.files, f)
		if err := f.Truncate(0); err == nil {
			f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		}
	}
	return l, nil
}

// lockName is key made fit for a file name, kept unique by a hash of it.
func lockName(key string) string {
	name := strings.Trim(unsafeChars.ReplaceAllString(key, "_"), "_")
	if len(name) > 100 {
		name = name[len(name)-100:]
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	return fmt.Sprintf("%s-%08x", name, h.Sum32())
}

// benchLock is a pool bench held across the processes of this host.
type benchLock struct {
	files []*os.File
}

// unlock lets the bench go; it is idempotent and takes a nil lock. The
// file stays (removing it would race with a process about to lock it).
func (l *benchLock) unlock() {
	if l == nil {
		return
	}
	for _, f := range l.files {
		f.Truncate(0)
		f.Close() // closing the last descriptor drops the flock
	}
	l.files = nil
}

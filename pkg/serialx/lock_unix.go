//go:build unix

package serialx

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hilrun/hilrun/pkg/gate/devices"
)

const (
	// lockAttempts bounds the create/inspect rounds of one acquireLock; each
	// round that loses a race to another process starts over.
	lockAttempts = 50
	// lockRetry is the pause before re-reading a lock file that is empty or
	// unreadable because its creator has not written its PID yet.
	lockRetry = 10 * time.Millisecond
	// lockWriteGrace is how old an empty or unreadable lock file must be to
	// count as left behind by a crash rather than being written right now.
	lockWriteGrace = 2 * time.Second
)

// portLock is a UUCP lock file this process created, or for a pty the
// device opened to hold flock(2) on it.
type portLock struct {
	path string
	pid  int
	file fs.FileInfo // identifies the file we created
	// dev holds the flock of a pty (flockDevice); nil for a lock file.
	dev *os.File
}

// acquireLock creates the UUCP lock file for device in dir. It returns the
// lock; or busy, the *OpenError to report when a live process holds it; or
// unavailable, why no lock could be taken (the directory is missing or not
// writable), for the caller to warn about and open the port anyway. A
// device that does not exist gets neither lock nor error: opening it
// reports that.
//
// Two hilrun processes taking over one stale lock at once must not both
// win, and a plain "read, see a dead PID, remove" lets the slower one
// remove the lock the faster one just created. So a stale lock is removed
// only while holding flock(2) on it and after checking the name still
// refers to that file; the create that follows uses O_EXCL, and the new
// lock is read back to make sure it is ours.
//
// A pty gets no lock file: it is locked with flock(2) on the device
// (flockDevice).
func acquireLock(gate devices.Policy, dir, device string) (lock *portLock, busy *OpenError, unavailable error) {
	if isPty(device) {
		return flockDevice(gate, device)
	}
	name, ok := lockName(device)
	if !ok {
		return nil, nil, nil
	}
	path := filepath.Join(dir, name)
	pid := os.Getpid()
	var last error
	for range lockAttempts {
		l, err := createLock(path, pid)
		if err == nil {
			if l != nil {
				return l, nil, nil
			}
			continue // replaced before we could read it back: look again
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, nil, err
		}
		held, err := inspectLock(path)
		switch {
		case err != nil:
			return nil, nil, err
		case held != nil:
			last = held
			if held.pid != 0 {
				return nil, &OpenError{Path: device, Kind: Busy, Err: held}, nil
			}
			time.Sleep(lockRetry) // being written
		}
	}
	if last == nil {
		last = fmt.Errorf("lock file %s keeps changing", path)
	}
	return nil, &OpenError{Path: device, Kind: Busy, Err: last}, nil
}

// createLock creates path with O_EXCL and writes pid into it. It returns
// the lock; nil and nil when another process replaced the file before it
// could be read back; or the error, wrapping fs.ErrExist when the lock
// exists.
func createLock(path string, pid int) (*portLock, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		if errors.Is(err, fs.ErrExist) {
			return nil, err
		}
		return nil, fmt.Errorf("create lock file: %w", err)
	}
	l := &portLock{path: path, pid: pid}
	_, werr := f.Write(formatLockPID(pid))
	if werr == nil {
		l.file, werr = f.Stat()
	}
	if err := f.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		os.Remove(path)
		return nil, fmt.Errorf("write lock file: %w", werr)
	}
	if !l.ours() {
		return nil, nil
	}
	return l, nil
}

// inspectLock looks at the existing lock file path. It returns the holder
// when the lock names a live process, or one with pid 0 when the file has
// no PID yet and may still be being written; nil and nil when the file is
// gone or was stale and has been removed, so creating it can be retried.
func inspectLock(path string) (*lockHeldError, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read lock file: %w", err)
	}
	defer f.Close()
	// Serialize takeovers by hilrun processes (see acquireLock). Other
	// programs do not take this flock; a holder keeps it only for the
	// few system calls below.
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		time.Sleep(time.Millisecond)
	}
	held, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("stat lock file: %w", err)
	}
	if now, err := os.Stat(path); err != nil || !os.SameFile(now, held) {
		return nil, nil // removed or replaced meanwhile: start over
	}
	b, err := io.ReadAll(io.LimitReader(f, 64))
	if err != nil {
		return nil, fmt.Errorf("read lock file: %w", err)
	}
	pid := parseLockPID(b)
	if pid == 0 {
		if time.Since(held.ModTime()) < lockWriteGrace {
			return &lockHeldError{lockFile: path}, nil
		}
	} else if processAlive(pid) {
		return &lockHeldError{pid: pid, command: processName(pid), lockFile: path}, nil
	}
	// Stale: its process is gone, or it never got a PID.
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("remove stale lock file: %w", err)
	}
	return nil, nil
}

// ours reports whether the lock file is still the one this lock created,
// with this process's PID in it.
func (l *portLock) ours() bool {
	if fi, err := os.Stat(l.path); err != nil || !os.SameFile(fi, l.file) {
		return false
	}
	b, err := os.ReadFile(l.path)
	return err == nil && bytes.Equal(b, formatLockPID(l.pid))
}

// release removes the lock file if it is still ours: another program that
// found it stale (our PID reused after a crash, or a lock removed by hand)
// may have replaced it, and its lock must stay. For a pty it closes the
// device, which ends the flock. It is a no-op on nil.
func (l *portLock) release() {
	switch {
	case l == nil:
	case l.dev != nil:
		l.dev.Close()
	case l.ours():
		os.Remove(l.path)
	}
}

// processAlive reports whether process pid exists: kill(pid, 0) fails with
// ESRCH only for a process that does not (EPERM means it exists but
// belongs to another user).
func processAlive(pid int) bool {
	return !errors.Is(syscall.Kill(pid, 0), syscall.ESRCH)
}

// processName returns the command name of process pid from /proc, "" when
// unknown (no /proc on this system, or the process has gone).
func processName(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/comm")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

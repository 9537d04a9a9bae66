// Package logfile writes hilrun's log files (console logs and timelines,
// host command output, OpenOCD's output) so that a full disk never stops
// what is being logged: a write that fails is counted, later writes are
// still tried, and Loss says what the file lacks, for the run to report
// as a bench error.
package logfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sync"
)

// File is a log file that counts what it could not write. Its methods are
// safe for concurrent use.
type File struct {
	// What names the file in errors: "console log", "openocd log".
	What string
	Path string

	mu    sync.Mutex
	f     *os.File
	total int64 // bytes meant for the file
	lost  int64 // bytes that could not be written
	err   error // the first error
}

// Create creates (or empties) the file at path, mode 0666 less the umask.
func Create(what, path string) (*File, error) {
	return open(what, path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC)
}

// Append opens the file at path for appending, creating it when needed.
func Append(what, path string) (*File, error) {
	return open(what, path, os.O_WRONLY|os.O_CREATE|os.O_APPEND)
}

func open(what, path string, flag int) (*File, error) {
	f, err := os.OpenFile(path, flag, 0o666)
	if err != nil {
		return nil, err
	}
	return &File{What: what, Path: path, f: f}, nil
}

// Write writes p and always reports success, so that the writer feeding the
// log (a program's output pipe) never fails; what it could not write is
// counted for Loss.
func (l *File) Write(p []byte) (int, error) {
	l.Put(p)
	return len(p), nil
}

// Put writes p, counting what could not be written, and reports whether
// this was the file's first error, for a warning as it happens.
func (l *File) Put(p []byte) (first bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil { // closed
		return false
	}
	n, err := l.f.Write(p)
	l.total += int64(len(p))
	if err == nil {
		return false
	}
	l.lost += int64(len(p) - n)
	if l.err != nil {
		return false
	}
	l.err = err
	return true
}

// Close closes the file; an error closing it counts as a loss. It is
// idempotent.
func (l *File) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return
	}
	if err := l.f.Close(); err != nil && l.err == nil {
		l.err = err
	}
	l.f = nil
}

// Err is the file's first error, without the path the messages give, or
// nil.
func (l *File) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return Cause(l.err)
}

// Loss says what the file lacks, or is nil.
func (l *File) Loss() *LossError {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.err == nil {
		return nil
	}
	return &LossError{What: l.What, File: l.Path, Lost: l.lost, Total: l.total, Err: l.err}
}

// LossError says which log file lost bytes and how many.
type LossError struct {
	What string // "console log", "exec log", "openocd log"
	File string // the file's path
	// Lost counts the bytes that could not be written, of Total meant
	// for the file.
	Lost, Total int64
	Err         error // the first write error
}

func (e *LossError) Error() string {
	return fmt.Sprintf("%s %s: %d of %d bytes lost: %v", e.What, e.File, e.Lost, e.Total, Cause(e.Err))
}

func (e *LossError) Unwrap() error { return e.Err }

// Cause is err without the file name that the messages already give.
func Cause(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Package devices is hilrun's one gate for opening devices by name:
// serial ports (a board's console, a Black Magic Probe's GDB port) and
// the device files hilrun locks or probes. Nothing else in hilrun opens a
// serial port (a test walks the source to keep it so); each open asks a
// Policy first, with the path as given and the path its links lead to.
// The zero Policy opens nothing.
package devices

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"go.bug.st/serial"
)

// ErrRefused is wrapped by the refusal of a Policy without an Allow.
var ErrRefused = errors.New("refused by the device policy")

// Policy says which devices may be opened.
type Policy struct {
	// Allow is asked before every open with the path given and the path
	// its links lead to (the same when it is no link, or leads nowhere);
	// an error refuses it.
	Allow func(path, real string) error
}

// Anywhere is the policy of the user's own command line: any device.
func Anywhere() Policy { return Policy{Allow: func(string, string) error { return nil }} }

func (p Policy) check(path string) error {
	if p.Allow == nil {
		return fmt.Errorf("open %s: %w: hilrun was wired without one", path, ErrRefused)
	}
	real := path
	if r, err := filepath.EvalSymlinks(path); err == nil {
		real = r
	}
	return p.Allow(path, real)
}

// OpenSerial opens the serial port at path with mode, once the policy
// allowed it.
func (p Policy) OpenSerial(path string, mode *serial.Mode) (serial.Port, error) {
	if err := p.check(path); err != nil {
		return nil, err
	}
	return serial.Open(path, mode)
}

// OpenFile opens the device file at path as os.OpenFile does, once the
// policy allowed it: to lock it, or to ask it what it is.
func (p Policy) OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	if err := p.check(path); err != nil {
		return nil, err
	}
	return os.OpenFile(path, flag, perm)
}

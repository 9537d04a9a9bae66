//go:build unix

package serialx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/hilrun/hilrun/pkg/gate/devices"
)

// isPty tells acquireLock whether a device is a pseudo-terminal; tests set
// it (in TestMain, before any test runs) to let ptys stand in for real
// serial ports.
var isPty = ptyDevice

// flockDevice locks the pty at device with flock(2) on the device itself,
// where picocom and pyserial's exclusive mode lock too, rather than with a
// UUCP lock file: no other program coordinates over a pty through the lock
// directory, and the kernel hands a pty's number to the next pty as soon as
// it is closed, so LCK..6 of a pty a live process still names would make
// the next /dev/pts/6 busy. The lock ends with the descriptor, even when
// the process is killed. It returns the lock, or busy when another open
// description holds the flock (another process, or another console of
// this one) or has the port in exclusive mode (TIOCEXCL); a device that
// does not exist gets neither: opening it reports that.
func flockDevice(gate devices.Policy, device string) (lock *portLock, busy *OpenError, unavailable error) {
	f, err := gate.OpenFile(device, os.O_RDONLY|unix.O_NOCTTY|unix.O_NONBLOCK, 0)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, nil
	case errors.Is(err, unix.EBUSY):
		return nil, classify(device, err), nil
	case err != nil:
		return nil, nil, fmt.Errorf("open %s to lock it: %w", device, err)
	}
	for {
		err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	switch {
	case err == nil:
		return &portLock{dev: f}, nil, nil
	case errors.Is(err, unix.EWOULDBLOCK):
		held := &flockHeldError{device: device}
		if fi, serr := f.Stat(); serr == nil {
			held.pid = flockHolder(fi)
			if held.pid != 0 {
				held.command = processName(held.pid)
			}
		}
		f.Close()
		return nil, &OpenError{Path: device, Kind: Busy, Err: held}, nil
	default:
		f.Close()
		return nil, nil, fmt.Errorf("flock %s: %w", device, err)
	}
}

// flockHeldError is the cause of a Busy *OpenError for a pty another open
// description holds flock(2) on: "held by PID 4711 (picocom), flock on
// /dev/pts/6".
type flockHeldError struct {
	pid     int    // 0 when unknown
	command string // from /proc/PID/comm; "" when unknown
	device  string
}

func (e *flockHeldError) Error() string {
	if e.pid == 0 {
		return "another program holds flock on " + e.device
	}
	s := "held by PID " + strconv.Itoa(e.pid)
	if e.command != "" {
		s += " (" + e.command + ")"
	}
	return s + ", flock on " + e.device
}

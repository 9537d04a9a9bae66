package serialx

import (
	"errors"
	"net"
	"strings"
	"syscall"

	"go.bug.st/serial"
)

// ErrDisconnected is wrapped by the error a console reports when its device
// went away (unplugged, reset into a bootloader, the other end of a pty
// closed): `/dev/ttyACM0: device disconnected: input/output error`.
var ErrDisconnected = errors.New("device disconnected")

// ErrClosed is wrapped by the error of operations on a closed Console, and
// of Expect and Capture calls interrupted by Close.
var ErrClosed = errors.New("console closed")

// errHangUp describes a device that stopped without an error code: the
// port reads as "readable with no data", which is how Linux reports a
// vanished USB serial adapter or a pty whose other side closed.
var errHangUp = errors.New("hang-up")

// OpenErrorKind classifies why a port could not be opened.
type OpenErrorKind int

// Kinds of OpenError.
const (
	Other      OpenErrorKind = iota // anything else
	NotFound                        // no such port (not plugged in, wrong path)
	Busy                            // another process holds the port
	Permission                      // the user may not open the port
	Invalid                         // not a usable serial port, or a setting it rejects
)

// String returns the kind in words, as used in OpenError messages.
func (k OpenErrorKind) String() string {
	switch k {
	case NotFound:
		return "no such port"
	case Busy:
		return "port busy"
	case Permission:
		return "permission denied"
	case Invalid:
		return "invalid port or setting"
	default:
		return "open failed"
	}
}

// OpenError reports a port that could not be opened or configured:
// `open /dev/ttyUSB0: port busy (held by PID 4711, picocom)`.
type OpenError struct {
	Path string
	Kind OpenErrorKind
	// Err is the underlying error: a *serial.PortError, a syscall.Errno or
	// an error of this package describing a bad setting.
	Err error

	holders string // who holds a busy port, when known
}

func (e *OpenError) Error() string {
	var sb strings.Builder
	sb.WriteString("open ")
	if e.Path != "" {
		sb.WriteString(e.Path)
	} else {
		sb.WriteString("serial port")
	}
	sb.WriteString(": ")
	switch e.Kind {
	case NotFound, Busy, Permission:
		sb.WriteString(e.Kind.String())
		if d := detail(e.Err); d != "" {
			sb.WriteString(": " + d)
		}
		if e.holders != "" {
			sb.WriteString(" (held by " + e.holders + ")")
		}
	default:
		if e.Err == nil {
			sb.WriteString(e.Kind.String())
		} else if d := detail(e.Err); d != "" {
			sb.WriteString(d)
		} else {
			sb.WriteString(lowerFirst(e.Err.Error()))
		}
	}
	return sb.String()
}

// Unwrap returns Err, so that errors.As finds a *serial.PortError (which has
// no Unwrap of its own) or errors.Is a syscall.Errno.
func (e *OpenError) Unwrap() error { return e.Err }

// detail returns what err adds to its kind: for a *serial.PortError the
// cause it carries, for an errno nothing when the kind says it all.
func detail(err error) string {
	var pe *serial.PortError
	if errors.As(err, &pe) {
		msg := pe.Error()
		enc := pe.EncodedErrorString()
		switch pe.Code() {
		case serial.PortBusy, serial.PortNotFound, serial.PermissionDenied:
			// The code is the kind; keep only a cause, if any.
			return strings.TrimPrefix(strings.TrimPrefix(msg, enc), ": ")
		}
		return lowerFirst(msg)
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch kindOfErrno(errno) {
		case NotFound, Busy, Permission:
			return ""
		}
	}
	if err == nil {
		return ""
	}
	return err.Error()
}

func lowerFirst(s string) string {
	if s == "" || s[0] < 'A' || s[0] > 'Z' {
		return s
	}
	return string(s[0]+'a'-'A') + s[1:]
}

// classify wraps an error from serial.Open into an *OpenError.
func classify(path string, err error) *OpenError {
	oe := &OpenError{Path: path, Kind: Other, Err: err}
	var pe *serial.PortError
	var errno syscall.Errno
	switch {
	case errors.As(err, &pe):
		switch pe.Code() {
		case serial.PortBusy:
			oe.Kind = Busy
		case serial.PortNotFound:
			oe.Kind = NotFound
		case serial.PermissionDenied:
			oe.Kind = Permission
		case serial.InvalidSerialPort, serial.InvalidSpeed, serial.InvalidDataBits,
			serial.InvalidParity, serial.InvalidStopBits:
			oe.Kind = Invalid
		}
	case errors.As(err, &errno):
		oe.Kind = kindOfErrno(errno)
	}
	if oe.Kind == Busy {
		oe.holders = holders(path)
	}
	return oe
}

func kindOfErrno(errno syscall.Errno) OpenErrorKind {
	switch errno {
	case syscall.ENOENT, syscall.ENODEV, syscall.ENXIO:
		return NotFound
	case syscall.EBUSY:
		return Busy
	case syscall.EACCES, syscall.EPERM:
		return Permission
	case syscall.ENOTTY:
		return Invalid
	}
	return Other
}

// isGone reports whether a write error means the device went away.
func isGone(err error) bool {
	return errors.Is(err, syscall.EIO) || errors.Is(err, syscall.ENXIO) ||
		errors.Is(err, syscall.ENODEV) || errors.Is(err, syscall.EBADF) ||
		// a network port whose server went away
		errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, net.ErrClosed)
}

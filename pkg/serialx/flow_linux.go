package serialx

import (
	"fmt"
	"reflect"

	"go.bug.st/serial"
	"golang.org/x/sys/unix"
)

// setFlowControl enables rtscts or xonxoff flow control on port.
//
// go.bug.st/serial clears CRTSCTS when it opens a port and offers no
// setting for flow control, and its Port hides the file descriptor. The
// descriptor is read from the unexported handle field of the Unix port
// type through reflection (reading an unexported field is allowed; nothing
// is written through it). If a future version renames the field, this
// returns an error rather than guessing; flow_linux_test.go checks it on a
// pty.
func setFlowControl(port serial.Port, flow string) error {
	fd, err := portFD(port)
	if err != nil {
		return fmt.Errorf("set flow control %s: %w", flow, err)
	}
	tio, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return fmt.Errorf("set flow control %s: read terminal settings: %w", flow, err)
	}
	switch flow {
	case "rtscts":
		tio.Cflag |= unix.CRTSCTS
		tio.Iflag &^= unix.IXON | unix.IXOFF | unix.IXANY
	case "xonxoff":
		tio.Cflag &^= unix.CRTSCTS
		tio.Iflag |= unix.IXON | unix.IXOFF
		tio.Iflag &^= unix.IXANY
		tio.Cc[unix.VSTART] = 0x11 // DC1
		tio.Cc[unix.VSTOP] = 0x13  // DC3
	default:
		return fmt.Errorf("unknown flow control %q", flow)
	}
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, tio); err != nil {
		return fmt.Errorf("set flow control %s: %w", flow, err)
	}
	return nil
}

// portFD returns the file descriptor inside a go.bug.st/serial port. A port
// of another package (Config.OpenPort) has none, whatever its fields are
// called.
func portFD(port serial.Port) (int, error) {
	if pp, ok := port.(*pollPort); ok {
		port = pp.Port
	}
	v := reflect.ValueOf(port)
	if v.Kind() == reflect.Pointer && !v.IsNil() {
		v = v.Elem()
	}
	if !v.IsValid() || v.Type().PkgPath() != reflect.TypeFor[serial.Mode]().PkgPath() {
		return -1, fmt.Errorf("a %T is not a go.bug.st/serial port (Config.OpenPort), so it has no descriptor", port)
	}
	if v.Kind() == reflect.Struct {
		if f := v.FieldByName("handle"); f.IsValid() && f.CanInt() {
			return int(f.Int()), nil
		}
	}
	return -1, fmt.Errorf("cannot find the file descriptor of a %T (go.bug.st/serial internals changed)", port)
}

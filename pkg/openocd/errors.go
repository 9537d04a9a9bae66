package openocd

import (
	"errors"
	"strconv"
	"strings"
)

// ErrUnavailable is wrapped by the errors of a session that cannot reach
// OpenOCD: the connection was refused, or it closed and reconnecting once
// did not help, or it closed while a command ran (whose effect is then
// unknown). It means the bench broke, not the target: hilrun maps it to
// exit code 3.
var ErrUnavailable = errors.New("openocd unavailable")

// ErrClosed is wrapped by the errors of a Session's methods after Close.
var ErrClosed = errors.New("openocd session closed")

// CommandError reports a command OpenOCD ran and refused, in its own words:
//
//	openocd: read_memory 0x30000000 32 1: Failed to read memory at 0x30000000; ...
//
// It means the target or the command is at fault, not the bench: the
// session remains usable.
type CommandError struct {
	// Cmd is the command as the caller gave it.
	Cmd string
	// Output is what OpenOCD printed while the command ran, one message a
	// line: its log lines, then the command's error message.
	Output string
	// Code is what Tcl's catch returned: 1 for a Tcl error, or OpenOCD's
	// error number (negative, such as -306 for an unaligned access) for a
	// command of OpenOCD's that failed.
	Code int
}

func (e *CommandError) Error() string {
	msg := strings.Join(strings.FieldsFunc(e.Output, func(r rune) bool { return r == '\n' }), "; ")
	if msg == "" {
		msg = "failed without a message (openocd error " + strconv.Itoa(e.Code)
		if name := errorNames[e.Code]; name != "" {
			msg += ": " + name
		}
		msg += ")"
	}
	return "openocd: " + e.Cmd + ": " + msg
}

// errorNames are the meanings of OpenOCD 0.12's common error numbers, for
// commands that fail without saying why.
var errorNames = map[int]string{
	-4:   "failure",
	-5:   "wait",
	-6:   "timeout reached",
	-7:   "not implemented",
	-100: "JTAG initialisation failed",
	-104: "JTAG queue failed",
	-107: "JTAG device error",
	-300: "invalid target",
	-302: "target timeout",
	-304: "target not halted",
	-305: "target failure",
	-306: "unaligned access",
	-307: "data abort",
	-308: "resource not available",
	-309: "translation fault",
	-310: "target not running",
	-311: "target not examined",
	-601: "syntax error",
	-602: "command not found",
	-603: "invalid argument",
	-604: "argument overflow",
	-605: "argument underflow",
	-902: "flash operation failed",
	-907: "flash bank not probed",
	-909: "flash protected",
}

// TestFailure reports that the error is the target's or the command's
// doing, not the bench's: a step that meets it fails rather than errors.
func (e *CommandError) TestFailure() bool { return true }

// unavailableError is an error that wraps ErrUnavailable and the cause,
// saying what was being done.
type unavailableError struct {
	msg string
	err error
}

func (e *unavailableError) Error() string {
	if e.err == nil {
		return e.msg
	}
	return e.msg + ": " + e.err.Error()
}

// BenchFault reports that the bench broke, not the target: a step that
// meets it ends as a bench error even when its timeout passed meanwhile.
func (e *unavailableError) BenchFault() bool { return true }

func (e *unavailableError) Unwrap() []error {
	if e.err == nil {
		return []error{ErrUnavailable}
	}
	return []error{ErrUnavailable, e.err}
}

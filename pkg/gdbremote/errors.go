package gdbremote

import (
	"errors"
	"fmt"
	"strings"
)

// ErrUnavailable is wrapped by the errors of a session that cannot reach
// the stub or lost it: nothing listens at the address, the handshake found
// no GDB stub, the connection closed, or a reply did not come in time. It
// means the bench broke, not the target: hilrun maps it to exit code 3.
var ErrUnavailable = errors.New("gdb stub unavailable")

// ErrClosed is wrapped by the errors of a Session's methods after Close.
var ErrClosed = errors.New("gdb remote session closed")

// ErrNotSupported is wrapped by the errors of operations the stub has no
// packet for, such as Reset on a stub without monitor commands.
var ErrNotSupported = errors.New("not supported by this stub")

// TargetError reports a request the stub refused with an error reply
// (Enn), such as a read of an address where the target faults:
//
//	reading 4 bytes at 0xfffffff0: the target refused (E14)
//
// It means the target or the request is at fault, not the bench: the
// session remains usable.
type TargetError struct {
	// Op says what was being done: "reading 4 bytes at 0xfffffff0".
	Op string
	// Reply is the stub's error reply, such as "E14".
	Reply string
	// Output is what the stub printed before it refused (the O packets
	// of a monitor command), which says why in its own words where the
	// reply is only a number: gdbserver answers a monitor command it
	// does not know with "Unknown monitor command." and E01.
	Output string
}

// maxOutputShown bounds the part of a TargetError's Output its message
// quotes.
const maxOutputShown = 200

func (e *TargetError) Error() string {
	msg := fmt.Sprintf("%s: the target refused (%s)", e.Op, e.Reply)
	if out := outputLines(e.Output); out != "" {
		msg += "; the stub printed: " + out
	}
	return msg
}

// outputLines is a stub's output on one line: lines trimmed, blank ones
// dropped, the rest joined by " | ", cut after maxOutputShown bytes.
func outputLines(out string) string {
	var lines []string
	for l := range strings.Lines(out) {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	s := strings.Join(lines, " | ")
	if len(s) > maxOutputShown {
		s = strings.ToValidUTF8(s[:maxOutputShown], "") + " ..."
	}
	return s
}

// TestFailure reports that the error is the target's doing, not the
// bench's: a step that meets it fails rather than errors.
func (e *TargetError) TestFailure() bool { return true }

// VerifyError reports that the target's memory does not hold an image
// file: VerifyImage found bytes that differ.
type VerifyError struct {
	// Path is the image file.
	Path string
	// Diffs lists the first differing bytes, one a line:
	// "0x40000010: 0x00 instead of 0x1f".
	Diffs []string
	// N counts all differing bytes.
	N int
}

func (e *VerifyError) Error() string {
	s := fmt.Sprintf("verify %s: %d bytes differ", e.Path, e.N)
	for _, d := range e.Diffs {
		s += "; " + d
	}
	if e.N > len(e.Diffs) {
		s += "; ..."
	}
	return s
}

// TestFailure reports that a mismatch is the target's doing.
func (e *VerifyError) TestFailure() bool { return true }

// unavailableError wraps ErrUnavailable and the cause, saying what was
// being done.
type unavailableError struct {
	msg string
	err error
}

func unavailable(err error, format string, args ...any) error {
	return &unavailableError{msg: fmt.Sprintf(format, args...), err: err}
}

func (e *unavailableError) Error() string {
	if e.err == nil {
		return e.msg
	}
	return e.msg + ": " + e.err.Error()
}

// BenchFault reports that the bench broke, not the target.
func (e *unavailableError) BenchFault() bool { return true }

func (e *unavailableError) Unwrap() []error {
	if e.err == nil {
		return []error{ErrUnavailable}
	}
	return []error{ErrUnavailable, e.err}
}

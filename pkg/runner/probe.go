package runner

import (
	"context"

	"github.com/hilrun/hilrun/pkg/steps"
)

// Debugger is a debug probe session as the runner uses it: one persistent
// connection for the whole run, in typed operations. *openocd.Session
// satisfies it; so does any backend that reads and writes target memory
// and halts, resumes and resets the target. What only some backends can do
// (raw commands, loading or programming images) are optional abilities,
// found with DebuggerAs.
type Debugger interface {
	// ReadMemory reads count values of width bits (8, 16, 32 or 64) from
	// addr.
	ReadMemory(ctx context.Context, addr uint64, width, count int) ([]uint64, error)
	// WriteMemory writes values of width bits from addr on.
	WriteMemory(ctx context.Context, addr uint64, width int, values []uint64) error
	// Halt stops the target.
	Halt(ctx context.Context) error
	// Resume lets a halted target run on.
	Resume(ctx context.Context) error
	// Reset resets the target; mode is what it does after: "run", "halt"
	// or "init" (halt and run the board's reset-init scripts).
	Reset(ctx context.Context, mode string) error
	Close() error
}

// RawCommander is a debugger that runs commands given as text and returns
// what they printed: OpenOCD's Tcl, a GDB stub's monitor commands (qRcmd).
// openocd: and monitor: steps need it.
type RawCommander interface {
	Command(ctx context.Context, cmd string) (string, error)
}

// ImageLoader is a debugger that writes image files into target RAM and
// checks them: *openocd.Session.
type ImageLoader interface {
	LoadImage(ctx context.Context, path string, offset uint64) (string, error)
	VerifyImage(ctx context.Context, path string, offset uint64) error
}

// Programmer is a debugger that writes an image file into the target's
// flash: *openocd.Session.
type Programmer interface {
	Program(ctx context.Context, path string, verify, reset bool, offset uint64) (string, error)
}

// AccessReporter is a debugger that may have to stop a running target for
// a memory access (GDB stubs are all-stop) and resume it after. It says
// whether its last access did; the runner puts that in the step's data as
// halted_for_access.
type AccessReporter interface {
	LastAccessHalted() bool
}

// ProbeOpener opens the debugger session of a probe, after the bench file,
// --openocd, --gdb or --sim bound it.
type ProbeOpener func(ctx context.Context, p *steps.Probe) (Debugger, error)

// DebuggerAs finds an optional ability T of d: d itself, or what it wraps,
// walking Unwrap() Debugger the way errors.As walks errors. A wrapper that
// guards abilities (a policy) implements them itself and has no Unwrap.
func DebuggerAs[T any](d Debugger) (T, bool) {
	for d != nil {
		if t, ok := d.(T); ok {
			return t, true
		}
		u, ok := d.(interface{ Unwrap() Debugger })
		if !ok {
			break
		}
		d = u.Unwrap()
	}
	var zero T
	return zero, false
}

// accessHalted reports whether d's last memory access stopped a running
// target (and resumed it after).
func accessHalted(d Debugger) bool {
	a, ok := DebuggerAs[AccessReporter](d)
	return ok && a.LastAccessHalted()
}

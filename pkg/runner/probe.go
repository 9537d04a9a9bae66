package runner

import "context"

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

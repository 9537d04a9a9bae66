package stream

import "context"

// idleKey carries the function WithIdle sets.
type idleKey struct{}

// WithIdle returns a context under which Expect, Capture and Wait call
// idle right before they first block for bytes still to come, once per
// call: the time their caller waits for the device anyway, in which it
// may do work it held back, such as writing its reports. A call that
// finds what it looks for in the bytes already there does not block and
// calls no idle. idle must be safe for concurrent use, must not call the
// Buffer, and should be quick: bytes that arrive meanwhile are taken in,
// but the call looks at them only once idle returns.
func WithIdle(ctx context.Context, idle func()) context.Context {
	return context.WithValue(ctx, idleKey{}, idle)
}

// Idle calls the function WithIdle set on ctx, if any: for other waits
// of the caller's (a timer, a barrier) to give that time too.
func Idle(ctx context.Context) {
	if f, _ := ctx.Value(idleKey{}).(func()); f != nil {
		f()
	}
}

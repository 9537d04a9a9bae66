package runner

import (
	"context"
	"time"
)

// sleepUntil waits until deadline on the monotonic clock, or until ctx is
// done, when it returns ctx's cause.
//
// On Linux the goroutine's thread sleeps in clock_nanosleep with an
// absolute deadline on CLOCK_MONOTONIC (the clock time.Now reads) and a
// timer slack of 1 ns until wakeEarly before the deadline, then polls the
// clock without yielding, and the code after sleepUntil (the next step's
// write) runs on the thread that woke. It never polls with sched_yield: a
// thread that yields on a busy machine is put behind every other runnable
// task, which cost a slice of milliseconds at the tail.
func sleepUntil(ctx context.Context, deadline time.Time) error {
	idleUntil(ctx, deadline)
	if release := waitUntil(ctx, deadline, false); release != nil {
		release()
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

// sleepTimed is sleepUntil for delay and repeat every:. With real-time
// scheduling on (EnableRealtime), the thread the wait ended on stays
// locked and SCHED_FIFO until r.endTimed, which the next step calls: a
// send after its write, any other step before it runs. So the write that
// follows a delay is not queued behind the machine's other work either.
func (r *run) sleepTimed(ctx context.Context, deadline time.Time) error {
	r.endTimed()
	r.wrote = time.Time{} // a delay after this wait counts from its end
	idleUntil(ctx, deadline)
	release := waitUntil(ctx, deadline, true)
	if ctx.Err() != nil {
		if release != nil {
			release()
		}
		return context.Cause(ctx)
	}
	r.timed = release
	return nil
}

// endTimed releases the thread a timed wait left locked, if any.
func (r *run) endTimed() {
	if r.timed != nil {
		r.timed()
		r.timed = nil
	}
}

// wakeEarly is how long before its deadline a wait's sleep ends; it polls
// the clock for the rest. A thread woken from a sleep runs some tens of
// microseconds after its time (the timer interrupt and the scheduler, more
// in a virtual machine): waking early and polling briefly takes that out
// of the wait's error, for at most this much CPU per wait.
const wakeEarly = 80 * time.Microsecond

// wakeCheck bounds how long a wait sleeps without looking at its context,
// and so how late a cancelled delay returns.
const wakeCheck = 20 * time.Millisecond

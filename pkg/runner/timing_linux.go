package runner

import (
	"context"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// waitUntil sleeps the calling thread until deadline or ctx is done. The
// deadline is turned into an absolute time of CLOCK_MONOTONIC once, so the
// checks of ctx every wakeCheck add no drift. With realtime scheduling on
// (EnableRealtime), the thread sleeps and wakes as SCHED_FIFO; with hold,
// it then stays locked and real-time, and waitUntil returns the function
// that releases it (nil when there is nothing to release).
func waitUntil(ctx context.Context, deadline time.Time, hold bool) (release func()) {
	runtime.LockOSThread()
	release = runtime.UnlockOSThread
	rt := realtime.Load()
	if rt {
		restore := fifo()
		release = func() {
			restore()
			runtime.UnlockOSThread()
		}
	}
	if !hold || !rt {
		// A thread at normal priority has nothing worth holding.
		defer release()
		release = nil
	}
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	var now unix.Timespec
	if unix.ClockGettime(unix.CLOCK_MONOTONIC, &now) != nil {
		time.Sleep(time.Until(deadline)) // no such clock: cannot happen on Linux
		return release
	}
	target := unix.TimespecToNsec(now) + time.Until(deadline).Nanoseconds() - wakeEarly.Nanoseconds()
	defer func() {
		// The last stretch: poll the clock without giving the CPU away
		// (a thread that yields is put behind every runnable task).
		for n := 0; time.Now().Before(deadline); n++ {
			if n&63 == 0 && ctx.Err() != nil {
				return
			}
		}
	}()
	done := ctx.Done()
	for {
		if done != nil {
			select {
			case <-done:
				return release
			default:
			}
		}
		t := target
		if done != nil {
			t = min(t, unix.TimespecToNsec(now)+wakeCheck.Nanoseconds())
		}
		ts := unix.NsecToTimespec(t)
		for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil) == unix.EINTR {
		}
		if t == target {
			return release
		}
		if unix.ClockGettime(unix.CLOCK_MONOTONIC, &now) != nil {
			return release
		}
	}
}

package runner

import (
	"context"
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// preciseWait sleeps the thread in nanosleep, with a timer slack of 1 ns
// instead of Linux's default 50 µs, until window before deadline, then polls
// the clock, yielding the CPU to any other thread between polls.
func preciseWait(ctx context.Context, deadline time.Time, window time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	if d := time.Until(deadline) - window; d > 0 {
		ts := unix.NsecToTimespec(d.Nanoseconds())
		for unix.Nanosleep(&ts, &ts) == unix.EINTR {
		}
	}
	for n := 0; time.Now().Before(deadline); n++ {
		if n&63 == 0 && ctx.Err() != nil {
			return
		}
		unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
	}
}

package runner

import (
	"context"
	"runtime"
	"time"
)

// spinWindow is the last stretch before a deadline that sleepUntil spends
// polling the clock instead of sleeping: the scheduler's timers fire late by
// tens to hundreds of microseconds, a spin by well under one.
const spinWindow = 1 * time.Millisecond

// sleepUntil waits until deadline on the monotonic clock, or until ctx is
// done, when it returns ctx's cause. It sleeps for all but the last
// spinWindow, then spins.
func sleepUntil(ctx context.Context, deadline time.Time) error {
	if d := time.Until(deadline) - spinWindow; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		case <-t.C:
		}
	}
	for n := 0; time.Now().Before(deadline); n++ {
		if n&63 == 0 && ctx.Err() != nil {
			return context.Cause(ctx)
		}
		runtime.Gosched()
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

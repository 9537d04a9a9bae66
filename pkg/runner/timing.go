package runner

import (
	"context"
	"time"
)

// Delays hit their deadline in three stretches: the scheduler's timer for
// all but the last timerMargin (it may fire a millisecond late), a precise
// sleep of the thread for all but the last spinWindow, and a poll of the
// clock that gives the CPU away between polls, so other processes (a
// simulated board on the same machine) keep running.
const (
	timerMargin = 2 * time.Millisecond
	spinWindow  = 200 * time.Microsecond
)

// sleepUntil waits until deadline on the monotonic clock, or until ctx is
// done, when it returns ctx's cause.
func sleepUntil(ctx context.Context, deadline time.Time) error {
	if d := time.Until(deadline) - timerMargin; d > 0 {
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		case <-t.C:
		}
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	preciseWait(ctx, deadline, spinWindow)
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	return nil
}

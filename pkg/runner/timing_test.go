package runner

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestSleepUntilReachesTheDeadline: the wait never ends before its
// deadline, by the clock the runner reads, cancellable or not.
func TestSleepUntilReachesTheDeadline(t *testing.T) {
	cancellable, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, ctx := range []context.Context{context.Background(), cancellable} {
		for _, d := range []time.Duration{-time.Millisecond, 0, 300 * time.Microsecond, 2 * time.Millisecond, wakeCheck + 5*time.Millisecond} {
			deadline := time.Now().Add(d)
			if err := sleepUntil(ctx, deadline); err != nil {
				t.Fatalf("sleepUntil(%s): %v", d, err)
			}
			if now := time.Now(); now.Before(deadline) {
				t.Errorf("sleepUntil(%s) returned %s before the deadline", d, deadline.Sub(now))
			}
		}
	}
}

// TestSleepUntilCancelled: a long wait ends when its context is cancelled,
// with the context's cause.
func TestSleepUntilCancelled(t *testing.T) {
	cause := errors.New("stopped by the test")
	ctx, cancel := context.WithCancelCause(context.Background())
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		close(started)
		done <- sleepUntil(ctx, time.Now().Add(time.Hour))
	}()
	<-started
	cancel(cause)
	select {
	case err := <-done:
		if !errors.Is(err, cause) {
			t.Errorf("sleepUntil returned %v, want the cause %v", err, cause)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a cancelled hour-long wait did not return within 20 s")
	}
}

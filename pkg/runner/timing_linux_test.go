package runner

import (
	"context"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestSleepTimedHoldsTheThreadUntilTheWrite: with real-time scheduling on,
// the thread a delay ended on stays SCHED_FIFO (when the process may raise
// it) until endTimed, which puts it back as it was.
func TestSleepTimedHoldsTheThreadUntilTheWrite(t *testing.T) {
	realtime.Store(true)
	defer realtime.Store(false)
	r := &run{}
	if err := r.sleepTimed(context.Background(), time.Now().Add(time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if r.timed == nil {
		t.Fatal("sleepTimed left nothing to release with real-time scheduling on")
	}
	attr, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	permitted := fifoAllowed()
	if permitted && attr.Policy != unix.SCHED_FIFO {
		t.Errorf("after the wait the thread's policy is %d, want SCHED_FIFO (%d)", attr.Policy, unix.SCHED_FIFO)
	}
	r.endTimed()
	if r.timed != nil {
		t.Error("endTimed left the release in place")
	}
	// The goroutine may be on another thread now; ask about this one with
	// the goroutine locked to it.
	attr, err = unix.SchedGetAttr(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if attr.Policy == unix.SCHED_FIFO {
		t.Errorf("after endTimed the thread is still SCHED_FIFO")
	}
	if !permitted {
		t.Log("SCHED_FIFO is not permitted here: only the release was checked")
	}
}

// fifoAllowed says whether this process may make a thread SCHED_FIFO.
func fifoAllowed() bool {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	restore := fifo()
	attr, err := unix.SchedGetAttr(0, 0)
	restore()
	return err == nil && attr.Policy == unix.SCHED_FIFO
}

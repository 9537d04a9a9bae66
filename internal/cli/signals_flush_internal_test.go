package cli

import (
	"context"
	"io"
	"syscall"
	"testing"
	"time"
)

// TestSignalWithStalledProgress: a signal stops the run even while the
// progress console's write is stuck (a terminal paused with Ctrl-S, a CI
// log reader that stopped reading): the flush before the signal's line
// must not hold the signal back.
func TestSignalWithStalledProgress(t *testing.T) {
	in := catchInterrupts(context.Background(), io.Discard)
	stuck := make(chan struct{})
	defer close(stuck)
	defer in.stop()
	in.enter(phaseRun)
	in.flushFirst(func() { <-stuck })
	in.sigs <- syscall.SIGTERM
	select {
	case <-in.Run.Done():
	case <-time.After(30 * time.Second):
		t.Fatal("the run was not stopped: the signal waits for the progress console's stuck write")
	}
}

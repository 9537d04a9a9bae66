package stream

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

func closedChan() <-chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}

func TestSpinWaitOnlyAfterQuickAnswers(t *testing.T) {
	var count atomic.Int32
	b := NewBuffer(0)
	// A fresh Buffer has no slow answer on record: it spins, and sees the
	// channel closed.
	if !b.spinWaitCounted(closedChan(), nil, &count, 2) {
		t.Fatal("a fresh Buffer did not spin")
	}
	// After a wait longer than the spin, it parks at once: were it to
	// spin, it would see the closed channel and report true.
	b.waited(time.Second)
	if b.spinWaitCounted(closedChan(), nil, &count, 2) {
		t.Fatal("spun although the last answer took 1s")
	}
	b.waited(10 * time.Microsecond)
	if !b.spinWaitCounted(closedChan(), nil, &count, 2) {
		t.Fatal("did not spin again after a quick answer")
	}
	if n := count.Load(); n != 0 {
		t.Fatalf("%d spinners still counted after the spins ended", n)
	}
}

func TestSpinWaitLeavesAProcessorToTheReader(t *testing.T) {
	var count atomic.Int32
	b := NewBuffer(0)
	if b.spinWaitCounted(closedChan(), nil, &count, 1) {
		t.Fatal("spun on the only processor, which the reader needs")
	}
	count.Store(3)
	if b.spinWaitCounted(closedChan(), nil, &count, 4) {
		t.Fatal("spun with 3 goroutines spinning on 4 processors")
	}
	if n := count.Load(); n != 3 {
		t.Fatalf("count %d after a refused spin, want 3", n)
	}
}

func TestSpinWaitGivesUp(t *testing.T) {
	var count atomic.Int32
	b := NewBuffer(0)
	if b.spinWaitCounted(make(chan struct{}), nil, &count, 2) {
		t.Fatal("reported a channel that never closed as closed")
	}
	if n := count.Load(); n != 0 {
		t.Fatalf("%d spinners still counted after the spin gave up", n)
	}
}

func TestExpectRecordsHowLongItWaited(t *testing.T) {
	b := NewBuffer(0)
	done := make(chan error, 1)
	go func() {
		_, err := b.Expect(context.Background(), 0, []Pattern{Literal("ready")}, nil)
		done <- err
	}()
	for registered := false; !registered; time.Sleep(time.Millisecond) {
		b.mu.RLock()
		registered = len(b.expecters) == 1
		b.mu.RUnlock()
	}
	// The Expect now waits at least this long whatever the scheduler does,
	// and so does the record of its wait.
	time.Sleep(10 * time.Millisecond)
	b.Append(time.Now(), []byte("ready\n"))
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := time.Duration(b.lastWait.Load()); got < spinFor {
		t.Fatalf("recorded a wait of %v, want at least %v", got, spinFor)
	}
	var count atomic.Int32
	if b.spinWaitCounted(closedChan(), nil, &count, 2) {
		t.Fatal("the next Expect would spin after a slow answer")
	}
}

func TestSpinWaitStopsWhenDone(t *testing.T) {
	var count atomic.Int32
	b := NewBuffer(0)
	// A done context ends the spin at once, however long spinFor is: the
	// Expect then sees ctx.Done in its select.
	if b.spinWaitCounted(make(chan struct{}), closedChan(), &count, 2) {
		t.Fatal("reported a channel that never closed as closed")
	}
	if n := count.Load(); n != 0 {
		t.Fatalf("%d spinners still counted", n)
	}
}

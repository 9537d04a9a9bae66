package results

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
)

// indexesIn reads the event file at path as bytes and returns the index of
// every step record in it, failing the test on a record cut short.
func indexesIn(t *testing.T, path string) map[int]bool {
	t.Helper()
	got := map[int]bool{}
	if err := Read(path, func(r *Record) error {
		if r.Type == RecordStep {
			got[r.Step.Index] = true
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func newTestStream(t *testing.T) (*Stream, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), EventFile)
	s, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.Event(runner.Event{Type: runner.SequenceStarted, Sequence: "fast", Time: time.Now()})
	return s, path
}

func started(i int) runner.Event {
	return runner.Event{Type: runner.StepStarted, Step: &runner.StepResult{Index: i, Path: strconv.Itoa(i), Kind: "set"}}
}

func finished(i int) runner.Event {
	return runner.Event{Type: runner.StepFinished, Step: &runner.StepResult{Index: i, Path: strconv.Itoa(i), Kind: "set", Status: runner.Passed}}
}

// Steps that never wait (no Idle) still have their records in the file,
// as bytes read back from it, by the time the step after next starts:
// step N's record when step N+2's StepStarted event returns. The timer
// is no part of it: it waits far longer than these steps take.
func TestStreamStepInFileBeforeTheStepAfterNext(t *testing.T) {
	s, path := newTestStream(t)
	for i := range 50 {
		s.Event(started(i))
		got := indexesIn(t, path)
		for j := range i - 1 {
			if !got[j] {
				t.Fatalf("step %d started and step %d is not in the event file", i, j)
			}
		}
		s.Event(finished(i))
	}
}

// Idle writes the records of the steps finished so far: the run waits
// for its device, and the write costs it nothing.
func TestStreamIdleWrites(t *testing.T) {
	s, path := newTestStream(t)
	s.Event(started(0))
	s.Event(finished(0))
	s.Event(started(1))
	s.Idle()
	if !indexesIn(t, path)[0] {
		t.Fatal("after Idle the finished step is not in the event file")
	}
	s.Idle() // nothing waiting: nothing to do
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
}

// Idle from several lines of execution at once (the branches of a
// parallel: step), beside their events and the timer, writes each record
// once and whole, and the guarantee holds for every branch (run it with
// -race).
func TestStreamIdleConcurrent(t *testing.T) {
	s, path := newTestStream(t)
	var mu sync.Mutex // the runner's: events come one at a time
	var wg sync.WaitGroup
	const per = 300
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				n := g*1000 + i
				mu.Lock()
				s.Event(started(n))
				mu.Unlock()
				s.Idle()
				mu.Lock()
				s.Event(finished(n))
				mu.Unlock()
				if i%7 == 0 {
					s.Idle()
				}
			}
		}()
	}
	wg.Wait()
	s.Event(runner.Event{Type: runner.SequenceFinished, Result: &runner.SequenceResult{Name: "fast", Status: runner.Passed}})
	seen := map[int]int{}
	if err := Read(path, func(r *Record) error {
		if r.Type == RecordStep {
			seen[r.Step.Index]++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 4*per {
		t.Errorf("%d steps in the file, want %d", len(seen), 4*per)
	}
	for i, n := range seen {
		if n != 1 {
			t.Errorf("step %d written %d times", i, n)
		}
	}
}

// A stream closed while its timer is armed writes what waits, and the
// timer, firing later, writes nothing more.
func TestStreamCloseWithTimerArmed(t *testing.T) {
	s, path := newTestStream(t)
	s.Event(finished(0))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s.fire()
	s.Idle()
	if !indexesIn(t, path)[0] {
		t.Fatal("the step is not in the closed event file")
	}
	if b, err := os.ReadFile(path); err != nil || len(b) == 0 {
		t.Fatalf("event file: %q %v", b, err)
	}
}

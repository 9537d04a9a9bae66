package results

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
)

// countRecords counts the step and end records of the event file at path,
// and fails the test unless the steps come in the order of their index.
func countRecords(t *testing.T, path string) (steps, ends int) {
	t.Helper()
	if err := Read(path, func(r *Record) error {
		switch r.Type {
		case RecordStep:
			if r.Step.Index != steps {
				return fmt.Errorf("step %d where step %d was due: out of order", r.Step.Index, steps)
			}
			steps++
		case RecordEnd:
			ends++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return steps, ends
}

// A finished step held back reaches the file without another event (a
// run that now waits a long time), and a sequence's end is in the file,
// with every step before it, when Event returns.
func TestStreamWritesHeldBackSteps(t *testing.T) {
	path := filepath.Join(t.TempDir(), EventFile)
	s, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Event(runner.Event{Type: runner.SequenceStarted, Sequence: "wait", Time: time.Now()})
	s.Event(runner.Event{Type: runner.StepFinished, Step: &runner.StepResult{Index: 0, Kind: "send", Status: runner.Passed}})
	for start := time.Now(); ; time.Sleep(10 * time.Millisecond) {
		if steps, _ := countRecords(t, path); steps == 1 {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatal("the finished step never reached the file")
		}
	}
	for i := 1; i < 100; i++ {
		s.Event(runner.Event{Type: runner.StepFinished, Step: &runner.StepResult{Index: i, Kind: "send", Status: runner.Passed}})
	}
	s.Event(runner.Event{Type: runner.SequenceFinished, Result: &runner.SequenceResult{Name: "wait", Status: runner.Passed}})
	if steps, ends := countRecords(t, path); steps != 100 || ends != 1 {
		t.Errorf("after the sequence's end the file holds %d steps and %d ends, want 100 and 1", steps, ends)
	}
}

// Records from several goroutines (consoles of a pool's benches) reach the
// file whole, each once, in the order Event took them; large values are
// written without waiting for the interval.
func TestStreamConcurrentEvents(t *testing.T) {
	path := filepath.Join(t.TempDir(), EventFile)
	s, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	s.Event(runner.Event{Type: runner.SequenceStarted, Sequence: "many", Time: time.Now()})
	big := strings.Repeat("x", flushSize)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				st := &runner.StepResult{Index: g*1000 + i, Kind: "send", Status: runner.Passed}
				if i%100 == 0 {
					st.Message = big
				}
				s.Event(runner.Event{Type: runner.StepFinished, Step: st})
			}
		}()
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	last := map[int]int{}
	seen := map[int]bool{}
	if err := Read(path, func(r *Record) error {
		if r.Type != RecordStep {
			return nil
		}
		i := r.Step.Index
		if seen[i] {
			t.Errorf("step %d written twice", i)
		}
		seen[i] = true
		if prev, ok := last[i/1000]; ok && prev > i {
			t.Errorf("step %d after step %d of the same goroutine", i, prev)
		}
		last[i/1000] = i
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(seen) != 2000 {
		t.Errorf("%d steps in the file, want 2000", len(seen))
	}
}

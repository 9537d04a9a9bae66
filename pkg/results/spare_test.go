package results

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
)

// An event file that cannot be written (a full disk: /dev/full) costs the
// reports nothing when a spare is given: every record reaches the spare,
// and Incomplete says what the event file lacks.
func TestStreamGoesOnInItsSpare(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here")
	}
	s, err := Create("/dev/full")
	if err != nil {
		t.Fatal(err)
	}
	spare := filepath.Join(t.TempDir(), EventFile)
	s.Spare = func() (string, error) { return spare, nil }
	s.Event(runner.Event{Type: runner.SequenceStarted, Sequence: "soak", Time: time.Now()})
	for i := 0; i < 5000; i++ {
		s.Event(runner.Event{Type: runner.StepFinished, Step: &runner.StepResult{Index: i, Kind: "send", Status: runner.Passed}})
	}
	s.Event(runner.Event{Type: runner.SequenceFinished, Result: &runner.SequenceResult{Name: "soak", Status: runner.Passed}})
	if err := s.Close(); err != nil {
		t.Fatalf("Close = %v, want nil: the spare holds everything", err)
	}
	if inc := s.Incomplete(); inc == nil || !strings.Contains(inc.Error(), "no space left on device") {
		t.Errorf("Incomplete = %v, want the event file's error", inc)
	}
	if s.Path() != spare {
		t.Errorf("Path = %s, want the spare %s", s.Path(), spare)
	}
	if steps, ends := countRecords(t, s.Path()); steps != 5000 || ends != 1 {
		t.Errorf("the spare holds %d steps and %d ends, want 5000 and 1", steps, ends)
	}
}

// Without a spare the stream stops at the first failed write and says so.
func TestStreamWithoutSpareStops(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here")
	}
	s, err := Create("/dev/full")
	if err != nil {
		t.Fatal(err)
	}
	s.Event(runner.Event{Type: runner.SequenceFinished, Result: &runner.SequenceResult{Name: "x"}})
	if err := s.Close(); err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Errorf("Close = %v, want the write error", err)
	}
}

package results

import (
	"path/filepath"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
)

// WriteResults records finished results in an event file in dir, as a
// Stream would have during their run, and returns its path. It suits
// results kept in memory (Options.KeepSteps), as in tests.
func WriteResults(dir string, seqs []runner.SequenceResult) (string, error) {
	s, err := Create(filepath.Join(dir, EventFile))
	if err != nil {
		return "", err
	}
	for i := range seqs {
		r := &seqs[i]
		s.Event(runner.Event{Type: runner.SequenceStarted, Sequence: r.Name, File: r.File, Time: r.StartedAt})
		for j := range r.Steps {
			st := r.Steps[j]
			s.Event(runner.Event{Type: runner.StepFinished, Step: &st, Time: r.StartedAt.Add(st.Started + st.Duration)})
		}
		s.Event(runner.Event{Type: runner.SequenceFinished, Result: r, Time: r.StartedAt.Add(r.Duration), Offset: time.Duration(0)})
	}
	return s.Path(), s.Close()
}

package cli

import (
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// recordNotRun records in sink a sequence that did not run because of the
// bench (why, "the bench is bad: ..."), as a sequence that ended in a
// bench error before its first step: every report then says it did not
// run and why, as the exit code does, rather than leaving it out of a
// report that would read as passed. bench names the pool's bench, if
// any.
func recordNotRun(sink runner.Sink, seq *steps.Sequence, bench, why string) runner.SequenceResult {
	now := time.Now()
	res := runner.SequenceResult{Name: seq.Name, File: seq.File, Bench: bench, Status: runner.Errored,
		StartedAt: now, Error: "not run: " + why, StepsWritten: steps.Written(seq), Tags: seq.Tags}
	sink.Event(runner.Event{Type: runner.SequenceStarted, Time: now, Sequence: seq.Name, File: seq.File})
	sink.Event(runner.Event{Type: runner.SequenceFinished, Time: now, Sequence: seq.Name, File: seq.File, Result: &res})
	return res
}

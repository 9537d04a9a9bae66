package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// jsonSequence is the head of a sequence in the JSON report. Its field
// order is the order of the output; its steps follow it.
type jsonSequence struct {
	Name string `json:"name"`
	File string `json:"file"`
	// Bench is the bench of a pool that ran the sequence.
	Bench string `json:"bench,omitempty"`
	// Tags are the sequence's own tags.
	Tags   []string `json:"tags,omitempty"`
	Status string   `json:"status"`
	// Interrupted is true when Ctrl-C or SIGTERM stopped the sequence,
	// whose status then reads "error".
	Interrupted bool              `json:"interrupted,omitempty"`
	DurationMS  results.Millis    `json:"duration_ms"`
	Error       string            `json:"error,omitempty"`
	Logs        map[string]string `json:"logs,omitempty"`
	Counts      results.Counts    `json:"counts"`
	// Flaky says the sequence passed only after a retry; Attempts are
	// its own attempts, when it has retries.
	Flaky    bool              `json:"flaky,omitempty"`
	Attempts []results.Attempt `json:"attempts,omitempty"`
}

// seqSummary is what a first pass over the event file learns of a sequence.
type seqSummary struct {
	seq    results.Sequence
	counts results.Counts
	width  int // digits of the largest top-level step index, at least 2
	// finallyWidth is the digits of the largest finally step index, at
	// least 1.
	finallyWidth int
	steps        bool
	// carry is set when the first testcase that did not run carries the
	// sequence's error in JUnit, in place of a testcase of its own.
	carry bool
}

// scan reads the event file once for the outcome of each sequence, and
// reports whether an interrupt ended a climb of a bench's ladder (the run
// stopped between sequences: it did not pass, whatever they did).
func scan(events string, opts results.Options) ([]seqSummary, bool, error) {
	var out []seqSummary
	climbStopped := false
	z := &results.Summarizer{
		BenchHooks: results.BenchHooks{OnRecovery: func(r *results.Recovery) { climbStopped = climbStopped || r.Interrupted }},
		Options:    opts,
		OnStart:    func(int, *results.Sequence) { out = append(out, seqSummary{width: 2, finallyWidth: 1}) },
		OnStep: func(_ int, st *results.Step) {
			s := &out[len(out)-1]
			s.steps = true
			if rest, ok := strings.CutPrefix(st.Path, finallyPrefix); ok {
				s.finallyWidth = max(s.finallyWidth, leadingDigits(rest))
			} else {
				s.width = max(s.width, leadingDigits(st.Path))
			}
		},
		OnEnd: func(_ int, seq *results.Sequence, c results.Counts) {
			s := &out[len(out)-1]
			s.seq, s.counts = *seq, c
		},
	}
	if err := results.Summarize(events, z); err != nil {
		return nil, false, err
	}
	return out, climbStopped, nil
}

// WriteJSON writes the run recorded in the event file events to w as one
// indented JSON document:
//
//	{"passed": bool, "sequences": [{"name", "file", "bench"?, "tags"?, "status", "duration_ms",
//	  "error"?, "logs"?, "counts", "steps": [{"index", "path", "kind", "name",
//	  "group"?, "branch"?, "id"?, "tags"?, "params"?, "status", "started_ms", "duration_ms", "message"?,
//	  "expected"?, "received"?, "saved"?, "data"?, "attachments"?, "file"?,
//	  "line"?, "column"?, "measurement"?, "repeat"?, "attempt"?, "attempts"?, "flaky"?}],
//	  "flaky"?, "attempts"?, "measurements"?, "measurements_left_out"?}], "flaky"?}
//
// The steps are those outside repeat iterations, in the order they
// finished; a repeat step carries "repeat", the summary of its iterations
// (package results: statistics, the first failing iterations up to
// opts.MaxFailures, the first and last iterations). Every step, iterations
// included, stays in the event file. "counts" counts the steps that are not
// groups or repeats, iterations included.
//
// The steps of the branches of a parallel: step carry "branch", their
// branch's name, and every branch's steps are listed, interleaved as they
// finished; each branch is a step of kind "branch" (path PARALLEL.NAME),
// and the parallel step's data lists its branches in the order written.
//
// A sequence or group with retries carries "attempts", one entry per
// attempt ({"scope", "name", "attempt", "of", "status", "started_ms",
// "duration_ms", "message"?, "output"?, "retried"?, "executions"}), and its
// steps "attempt", the attempt they ran in: every attempt's steps are
// listed. "flaky": true marks a sequence that passed only after a retry
// (of it, or of a group in it, which has "flaky" too), and the document
// when any sequence is flaky. The executions of an attempt that was
// retried are counted under "counts"' "retried", not by their status.
//
// A measure step carries "measurement" (name, value, unit, min, max,
// equals, regex, outcome), a repeat's summary the statistics of each
// measurement inside it ("measurements"), and a sequence lists every
// measurement it made, iterations included, under "measurements" (with
// "step", its path, and "iteration", that of the innermost repeat), up
// to results.MaxListedMeasurements, counting the rest in
// "measurements_left_out".
//
// A sequence's "tags" are its own. A group, each case of a matrix among
// them, carries "tags", its tags as -m matches them (its own, then those
// of the groups around it and the sequence's), and a matrix case
// "params", its values as one object whose keys are in the order the
// matrix wrote them ({"fw": "2.4.1", "baud": 9600}).
//
// A send step's data holds "sent", the text it sent with its line ending
// (a step's name shows the values it used, see runner.StepResult.Name).
//
// After the sequences, a run whose benches have recovery ladders lists
// each climb under "recoveries" (results.Recovery: bench, trigger,
// sequence, started_at, duration_ms, check, rungs with each rung's health
// check, recovered) and the benches it marked bad under "bad_benches"
// (bench, reason, at); both are left out when no ladder climbed.
//
// Durations and offsets (*_ms) are float milliseconds with three decimals.
// Statuses are the runner's, except that an interrupted step or sequence
// reads "error", and the document and that sequence carry
// "interrupted": true (left out otherwise). "passed" is true when there was at least one sequence and
// every sequence passed. Byte slices in saved and data are strings with
// non-printable bytes and backslashes escaped (\x1b, \r, \\); floats that
// JSON cannot hold (NaN, ±Inf) are strings. Transcripts are left out: they
// belong to the log files listed under "logs".
//
// The document is written as the file is read, so memory stays bounded
// however many steps ran.
func WriteJSON(w io.Writer, events string, opts results.Options) error {
	return WriteShardJSON(w, events, opts, nil)
}

// WriteShardJSON is WriteJSON for one shard of a run (hilrun run --shard):
// after "passed" the document says which, as
//
//	"shard": {"index", "total", "sequences", "plan"}
//
// (Shard), so that MergeJSON can tell when a shard is missing. A nil
// shard writes what WriteJSON does.
func WriteShardJSON(w io.Writer, events string, opts results.Options, shard *Shard) error {
	seqs, climbStopped, err := scan(events, opts)
	if err != nil {
		return fmt.Errorf("write json report: %w", err)
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	jw := &jsonWriter{w: bw}
	passed, interrupted, flaky := len(seqs) > 0 && !climbStopped, climbStopped, false
	for _, s := range seqs {
		passed = passed && s.seq.Status == runner.Passed
		interrupted = interrupted || s.seq.Status == runner.Interrupted
		flaky = flaky || s.seq.Flaky
	}
	jw.printf("{\n  \"passed\": %t,\n", passed)
	if flaky {
		jw.printf("  \"flaky\": true,\n")
	}
	if interrupted {
		jw.printf("  \"interrupted\": true,\n")
	}
	if shard != nil {
		jw.printf("  \"shard\": %s,\n", jw.marshal(shard, "  "))
	}
	jw.printf("  \"sequences\": [")
	nsteps := 0
	var meas measureList
	var benches results.Benches
	z := &results.Summarizer{
		Options: opts,
		OnEvery: func(_ int, st *results.Step) { meas.add(st) },
		OnStart: func(i int, _ *results.Sequence) {
			if i >= len(seqs) {
				return
			}
			s := &seqs[i]
			if i > 0 {
				jw.printf(",")
			}
			head := jsonSequence{
				Name: s.seq.Name, File: s.seq.File, Bench: s.seq.Bench, Tags: s.seq.Tags, Status: reportStatus(s.seq.Status),
				Interrupted: s.seq.Status == runner.Interrupted,
				DurationMS:  s.seq.DurationMS, Error: s.seq.Error, Logs: s.seq.Logs, Counts: s.counts,
				Flaky: s.seq.Flaky, Attempts: reportAttempts(s.seq.Attempts),
			}
			b := jw.marshal(head, "    ")
			// Open the object again to append its steps.
			b = b[:bytes.LastIndexByte(b, '\n')]
			jw.printf("\n    %s,\n      \"steps\": [", b)
			nsteps = 0
		},
		OnStep: func(_ int, st *results.Step) {
			if nsteps > 0 {
				jw.printf(",")
			}
			nsteps++
			jw.printf("\n        %s", jw.marshal(reportStep(*st), "        "))
		},
		OnEnd: func(int, *results.Sequence, results.Counts) {
			if nsteps > 0 {
				jw.printf("\n      ")
			}
			jw.printf("]")
			meas.write(jw)
			jw.printf("\n    }")
		},
	}
	z.BenchHooks = benches.Hooks()
	if err := results.Summarize(events, z); err != nil {
		return fmt.Errorf("write json report: %w", err)
	}
	if len(seqs) > 0 {
		jw.printf("\n  ")
	}
	jw.printf("]")
	writeJSONBenches(jw, &benches)
	jw.printf("\n}\n")
	if jw.err == nil {
		jw.err = bw.Flush()
	}
	if jw.err != nil {
		return fmt.Errorf("write json report: %w", jw.err)
	}
	return nil
}

// jsonWriter keeps the first error of a run of writes.
type jsonWriter struct {
	w   io.Writer
	err error
}

func (j *jsonWriter) printf(format string, args ...any) {
	if j.err == nil {
		_, j.err = fmt.Fprintf(j.w, format, args...)
	}
}

// marshal encodes v indented as if nested at prefix, without a final
// newline; "<" and "&" stay as they are, since the report is not embedded
// in HTML.
func (j *jsonWriter) marshal(v any, prefix string) []byte {
	var buf bytesBuffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent(prefix, "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil && j.err == nil {
		j.err = err
	}
	b := buf.b
	if n := len(b); n > 0 && b[n-1] == '\n' {
		b = b[:n-1]
	}
	return b
}

type bytesBuffer struct{ b []byte }

func (w *bytesBuffer) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// reportStep is st with the statuses the reports show.
func reportStep(st results.Step) results.Step {
	st.Status = runner.Status(reportStatus(st.Status))
	st.Attempts = reportAttempts(st.Attempts)
	if st.Repeat != nil {
		r := *st.Repeat
		r.Failures = append([]results.Iteration(nil), r.Failures...)
		for i := range r.Failures {
			r.Failures[i] = reportIteration(r.Failures[i])
		}
		if r.First != nil {
			f := reportIteration(*r.First)
			r.First = &f
		}
		if r.Last != nil {
			l := reportIteration(*r.Last)
			r.Last = &l
		}
		st.Repeat = &r
	}
	return st
}

func reportIteration(it results.Iteration) results.Iteration {
	it.Status = runner.Status(reportStatus(it.Status))
	it.Detail = append([]results.StepBase(nil), it.Detail...)
	for i := range it.Detail {
		it.Detail[i].Status = runner.Status(reportStatus(it.Detail[i].Status))
	}
	return it
}

// reportAttempts is list with the statuses the reports show.
func reportAttempts(list []results.Attempt) []results.Attempt {
	if len(list) == 0 {
		return nil
	}
	out := make([]results.Attempt, len(list))
	for i, a := range list {
		a.Status = runner.Status(reportStatus(a.Status))
		out[i] = a
	}
	return out
}

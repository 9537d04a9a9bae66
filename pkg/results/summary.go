package results

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// Defaults of the summary rule.
const (
	// DefaultMaxFailures is how many failing iterations a repeat lists, and
	// how many steps that did not pass a JUnit test case lists.
	DefaultMaxFailures = 100
	// DefaultIterationSteps is how many steps an iteration's detail lists.
	DefaultIterationSteps = 20
)

// Options set the bounds of the summary rule.
type Options struct {
	// MaxFailures caps the failing iterations listed per repeat; the rest
	// are counted. 0 means DefaultMaxFailures.
	MaxFailures int
	// IterationSteps caps the steps listed per iteration; the rest are
	// counted. 0 means DefaultIterationSteps.
	IterationSteps int
}

// FailureCap is MaxFailures, or its default.
func (o Options) FailureCap() int {
	if o.MaxFailures <= 0 {
		return DefaultMaxFailures
	}
	return o.MaxFailures
}

// IterationCap is IterationSteps, or its default.
func (o Options) IterationCap() int {
	if o.IterationSteps <= 0 {
		return DefaultIterationSteps
	}
	return o.IterationSteps
}

// Counts counts the executions of a sequence's steps that are not groups
// or repeats, iterations included, by status; Steps counts those steps as
// written in the file, each once (steps.Counted words the two).
type Counts struct {
	Steps       int `json:"steps"`
	Total       int `json:"total"`
	Passed      int `json:"passed"`
	Failed      int `json:"failed"`
	Errored     int `json:"error"`
	Skipped     int `json:"skipped"`
	Interrupted int `json:"interrupted"`
	// Retried counts the executions of attempts that another attempt
	// followed (retries:), whatever their status.
	Retried int `json:"retried,omitempty"`
}

// Text is Counts in the words of every report: "18 steps, 42
// executions".
func (c Counts) Text() string { return steps.Counted(c.Steps, c.Total) }

// Add counts one execution of a step with status st.
func (c *Counts) Add(st runner.Status) {
	c.Total++
	switch st {
	case runner.Passed:
		c.Passed++
	case runner.Failed:
		c.Failed++
	case runner.Skipped:
		c.Skipped++
	case runner.Interrupted:
		c.Interrupted++
	default:
		c.Errored++
	}
}

// Repeat is the summary of a repeat step's iterations.
type Repeat struct {
	Iterations int `json:"iterations"`
	Passed     int `json:"passed"`
	Failed     int `json:"failed"`
	// Errored counts iterations that ended on a bench error or an
	// interruption.
	Errored int `json:"error"`
	// Iteration durations, from the start of an iteration's first step to
	// the end of its last. Median and P99 are exact when QuantilesExact,
	// else estimated within 1% (see durations).
	MinMS          Millis `json:"min_ms"`
	MedianMS       Millis `json:"median_ms"`
	P99MS          Millis `json:"p99_ms"`
	MaxMS          Millis `json:"max_ms"`
	QuantilesExact bool   `json:"quantiles_exact"`
	// Failures are the first failing iterations, up to the cap;
	// MoreFailures counts the failing iterations left out.
	Failures     []Iteration `json:"failures,omitempty"`
	MoreFailures int         `json:"more_failures,omitempty"`
	First        *Iteration  `json:"first,omitempty"`
	Last         *Iteration  `json:"last,omitempty"`
	// Measurements summarise the measure steps of every iteration, one
	// entry per measurement name in the order first measured, up to
	// MaxMeasureNames; MoreMeasurements counts the names left out.
	Measurements     []MeasureStats `json:"measurements,omitempty"`
	MoreMeasurements int            `json:"more_measurements,omitempty"`
}

// Iteration is one iteration of a repeat.
type Iteration struct {
	Index      int           `json:"index"`
	Status     runner.Status `json:"status"`
	StartedMS  Millis        `json:"started_ms"`
	DurationMS Millis        `json:"duration_ms"`
	// Steps counts the step records of the iteration, steps of nested
	// repeats excepted (their repeat step summarises them).
	Steps int `json:"steps"`
	// Detail lists steps of the iteration, up to the cap: the first ones,
	// or for a failing iteration those that did not pass. More counts
	// those left out.
	Detail []StepBase `json:"detail,omitempty"`
	More   int        `json:"more,omitempty"`
}

// Summarizer applies the summary rule to the records of an event file, fed
// to Add in order. It calls OnStep for every step that is not inside a
// repeat's iteration, in the order steps finished, with Step.Repeat set on
// repeats; the steps inside iterations reach reports only through that
// summary. Its memory is bounded by the caps of Options and the nesting
// depth of repeats (times the branches of a parallel: step), whatever the
// number of steps.
type Summarizer struct {
	Options Options
	// OnStart is called when a sequence starts, OnEnd when it ends, with
	// the counts of its steps.
	OnStart func(seq int, s *Sequence)
	OnStep  func(seq int, st *Step)
	OnEnd   func(seq int, s *Sequence, c Counts)
	// OnAttempt is called when an attempt of a sequence or group with
	// retries ends, after its steps.
	OnAttempt func(seq int, a *Attempt)
	// OnEvery, when set, is called for every step record, iterations
	// included, before the summary rule takes it: for what a report
	// lists of every step in bounded memory, such as measurements.
	OnEvery func(seq int, st *Step)
	// BenchHooks receive the recovery records, between sequences.
	BenchHooks

	seq    int
	events int       // the sequences Event has started
	open   *Sequence // the start record of the sequence not yet ended
	counts Counts
	// repeats are the repeats open, by path.
	repeats map[string]*repeatAgg
}

// CutShort is the Error of a sequence whose end record never came, as when
// hilrun was killed or the disk filled up.
const CutShort = "the event stream ends before this sequence did"

// Add takes the next record.
func (z *Summarizer) Add(r *Record) {
	switch r.Type {
	case RecordStart:
		z.Close()
		if r.Sequence == nil {
			r.Sequence = &Sequence{}
		}
		z.seq, z.counts, z.repeats, z.open = r.Seq, Counts{}, nil, r.Sequence
		if z.OnStart != nil {
			z.OnStart(r.Seq, r.Sequence)
		}
	case RecordStep:
		if r.Step != nil && z.OnEvery != nil && z.open != nil {
			z.OnEvery(z.seq, r.Step)
		}
		if r.Step != nil {
			z.step(r.Step)
		}
	case RecordAttempt:
		if r.Attempt != nil && z.open != nil {
			z.attempt(r.Attempt)
		}
	case RecordEnd:
		if z.open == nil {
			return
		}
		z.repeats, z.open = nil, nil
		if z.OnEnd != nil && r.Sequence != nil {
			c := z.counts
			c.Steps = r.Sequence.StepsWritten
			if c.Steps == 0 {
				c.Steps = c.Total // an event file older than the count
			}
			z.OnEnd(r.Seq, r.Sequence, c)
		}
	default:
		z.benchRecord(r)
	}
}

// Event makes a Summarizer a runner.Sink: it takes a run's events as they
// happen, as the event file records them, so that a result of the run
// needs no pass over the file. Records carry their values as the runner
// made them (a number is not a json.Number), which JSON writes the same.
func (z *Summarizer) Event(e runner.Event) {
	r, ok := recordOf(e)
	if !ok {
		return
	}
	if e.Type == runner.SequenceStarted {
		z.events++
	}
	r.Seq = max(z.events-1, 0)
	z.Add(&r)
}

var _ runner.Sink = (*Summarizer)(nil)

// Close ends a sequence whose end record never came: OnEnd gets its start
// record with status error and CutShort as its Error. Steps of repeats left
// open are lost from the summary; the event file still has them.
func (z *Summarizer) Close() {
	if z.open == nil {
		return
	}
	seq := *z.open
	seq.Status, seq.Error = runner.Errored, CutShort
	z.Add(&Record{Type: RecordEnd, Seq: z.seq, Sequence: &seq})
}

// Summarize reads the event file at path through z. A file cut short
// inside a record is read up to there: its last sequence then reads as cut
// short (see Close), and whoever wrote the file reports why it stopped.
func Summarize(path string, z *Summarizer) error {
	err := Read(path, func(r *Record) error {
		z.Add(r)
		return nil
	})
	z.Close()
	if errors.Is(err, ErrTruncated) {
		return nil
	}
	return err
}

func (z *Summarizer) step(st *Step) {
	if !st.IsContainer() {
		z.counts.Add(st.Status)
	}
	chain := repeatChain(st.Path)
	// A repeat's own record ends it: its iterations are summarised. The
	// repeats still open are found by path, not by nesting, as the steps
	// of the branches of a parallel: step finish interleaved.
	if st.Kind == "repeat" {
		if agg := z.repeats[st.Path]; agg != nil {
			delete(z.repeats, st.Path)
			st.Repeat = agg.finish()
		} else {
			st.Repeat = (&repeatAgg{opts: z.Options}).finish()
		}
	}
	for i, link := range chain {
		agg := z.repeats[link.path]
		if agg == nil {
			if z.repeats == nil {
				z.repeats = map[string]*repeatAgg{}
			}
			agg = &repeatAgg{path: link.path, opts: z.Options}
			z.repeats[link.path] = agg
		}
		agg.add(st, link.iteration, i == len(chain)-1)
	}
	if len(chain) == 0 && z.OnStep != nil {
		z.OnStep(z.seq, st)
	}
}

type chainLink struct {
	path      string
	iteration int
}

// repeatChain lists the repeats a step at path is inside, outermost first,
// with the iteration it is in: "4#2.1#3.0" is in iteration 2 of repeat "4"
// and iteration 3 of repeat "4#2.1".
func repeatChain(path string) []chainLink {
	var out []chainLink
	for i := 0; i < len(path); i++ {
		if path[i] != '#' {
			continue
		}
		j := i + 1
		for j < len(path) && path[j] >= '0' && path[j] <= '9' {
			j++
		}
		n, _ := strconv.Atoi(path[i+1 : j])
		out = append(out, chainLink{path: path[:i], iteration: n})
	}
	return out
}

// repeatAgg summarises an open repeat.
type repeatAgg struct {
	path string
	opts Options
	rep  Repeat
	durs durations
	meas measureAgg
	cur  *iterAgg
}

type iterAgg struct {
	it         Iteration
	start, end time.Duration
	started    bool
	problems   []StepBase
	moreProbs  int
}

func (a *repeatAgg) add(st *Step, iteration int, direct bool) {
	if a.cur == nil || a.cur.it.Index != iteration {
		a.closeIteration()
		a.cur = &iterAgg{it: Iteration{Index: iteration, Status: runner.Skipped}}
	}
	it := a.cur
	start, end := st.StartedMS.D(), st.StartedMS.D()+st.DurationMS.D()
	if !it.started || start < it.start {
		it.start = start
	}
	if !it.started || end > it.end {
		it.end = end
	}
	it.started = true
	if st.Measurement != nil {
		a.meas.add(st.Measurement)
	}
	if st.Status != runner.Skipped {
		if it.it.Status == runner.Skipped {
			it.it.Status = runner.Passed
		}
		it.it.Status = Worst(it.it.Status, st.Status)
	}
	if !direct {
		return
	}
	it.it.Steps++
	keep := a.opts.IterationCap()
	if len(it.it.Detail) < keep {
		it.it.Detail = append(it.it.Detail, st.StepBase)
	} else {
		it.it.More++
	}
	if isProblem(st.Status) {
		if len(it.problems) < keep {
			it.problems = append(it.problems, st.StepBase)
		} else {
			it.moreProbs++
		}
	}
}

// closeIteration folds the current iteration into the summary.
func (a *repeatAgg) closeIteration() {
	it := a.cur
	if it == nil {
		return
	}
	a.cur = nil
	it.it.StartedMS, it.it.DurationMS = MS(it.start), MS(it.end-it.start)
	r := &a.rep
	r.Iterations++
	switch it.it.Status {
	case runner.Passed:
		r.Passed++
	case runner.Failed:
		r.Failed++
	case runner.Errored, runner.Interrupted:
		r.Errored++
	}
	a.durs.add(it.end - it.start)
	if r.First == nil {
		first := it.it
		r.First = &first
	}
	if isProblem(it.it.Status) {
		if len(r.Failures) < a.opts.FailureCap() {
			f := it.it
			f.Detail, f.More = it.problems, it.moreProbs
			r.Failures = append(r.Failures, f)
		} else {
			r.MoreFailures++
		}
	}
	last := it.it
	r.Last = &last
}

func (a *repeatAgg) finish() *Repeat {
	a.closeIteration()
	r := a.rep
	if r.Iterations > 0 {
		r.MinMS, r.MaxMS = MS(a.durs.min), MS(a.durs.max)
		r.MedianMS, r.P99MS = MS(a.durs.quantile(0.5)), MS(a.durs.quantile(0.99))
		r.QuantilesExact = !a.durs.spilled
	}
	r.Measurements, r.MoreMeasurements = a.meas.finish()
	if r.Last != nil && r.First != nil && r.Last.Index == r.First.Index && r.Iterations == 1 {
		r.Last = nil
	}
	return &r
}

// isProblem reports whether st means a step did not pass and was not
// skipped.
func isProblem(st runner.Status) bool { return st != runner.Passed && st != runner.Skipped }

// Worst orders outcomes as the runner does: interrupted outranks error,
// error outranks failed, failed outranks passed and skipped.
func Worst(a, b runner.Status) runner.Status {
	rank := func(s runner.Status) int {
		switch s {
		case runner.Failed:
			return 1
		case runner.Errored:
			return 2
		case runner.Interrupted:
			return 3
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}

// TopKey is the top-level entry a step belongs to: the first part of its
// path ("3" for "3.1#2.0"), or "finally.N" for a finally step and
// "before_retry.N" for a sequence's before_retry step.
func TopKey(path string) string {
	for _, prefix := range []string{"finally.", "before_retry."} {
		if rest, ok := strings.CutPrefix(path, prefix); ok {
			return prefix + rest[:topEnd(rest)]
		}
	}
	return path[:topEnd(path)]
}

func topEnd(rest string) int {
	end := strings.IndexAny(rest, ".#")
	if end < 0 {
		end = len(rest)
	}
	return end
}

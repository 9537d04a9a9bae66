package report

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// Bounds of the Allure results.
const (
	// allureCaseSteps bounds the steps one test case lists; the rest are
	// counted in its description.
	allureCaseSteps = 1000
	// allureConsoleBytes bounds the console bytes attached to one test
	// case: the last ones of its time are kept.
	allureConsoleBytes = 1 << 20
)

// AllureOptions configures WriteAllure.
type AllureOptions struct {
	// Summary bounds what a repeat lists (package results).
	Summary results.Options
	// Info gives the test cases the host's bench and hilrun's version as
	// parameters.
	Info RunInfo
	// ConsoleDir is as for HTMLOptions.
	ConsoleDir func(seq int) string
	// Files opens what the event file names (console logs, pictures)
	// and writes the report's own files; the zero policy opens none
	// (hilrun run passes files.Anywhere, the MCP server its run folder).
	Files files.Policy
}

// WriteAllure writes the run recorded in the event file events into dir as
// Allure results, which Allure's own tools (the npm package allure)
// render: one <uuid>-result.json per test case, and its attachments beside
// it as <uuid>-attachment.<ext>.
//
// A test case is what it is in the JUnit report: a top-level group, with
// its steps nested as Allure steps, or a top-level step; a repeat is one
// step whose nested steps are its failing iterations, first and last (the
// summary rule, package results). Statuses: failed stays failed, error
// and interrupted are broken, skipped stays skipped. Each test case has
// its start and stop (epoch milliseconds), its steps' expected, received
// and file position as status details, the pictures its camera steps took,
// and the console bytes received during it (the last MiB of each console)
// as attachments. Each climb of a bench's recovery ladder is a test case
// of its own (see writeRecoveries). Other files in dir are left alone; the names are the
// same for the same run, so writing again replaces them.
//
// The results are written as the event file is read, in bounded memory.
func WriteAllure(ctx context.Context, dir, events string, opts AllureOptions) error {
	if err := writeAllure(ctx, dir, events, opts); err != nil {
		return fmt.Errorf("write allure results: %w", err)
	}
	return nil
}

func writeAllure(ctx context.Context, dir, events string, opts AllureOptions) error {
	if err := opts.Files.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	seqs, _, err := scan(events, opts.Summary)
	if err != nil {
		return err
	}
	a := &allureWriter{dir: dir, events: events, opts: opts, seqs: seqs}
	var benches results.Benches
	z := &results.Summarizer{
		Options: opts.Summary,
		OnStart: func(i int, _ *results.Sequence) { a.start(i) },
		OnStep: func(_ int, st *results.Step) {
			if a.err == nil {
				a.err = ctx.Err()
			}
			a.step(st)
		},
		OnEnd: func(int, *results.Sequence, results.Counts) { a.end() },
	}
	z.BenchHooks = benches.Hooks()
	if err := results.Summarize(events, z); err != nil {
		return err
	}
	a.writeRecoveries(&benches)
	return a.err
}

type allureWriter struct {
	dir    string
	events string
	opts   AllureOptions
	seqs   []seqSummary
	err    error

	seq    *seqSummary
	seqIdx int
	key    string // the top-level entry being gathered
	// pending are, by the path of their container, the steps finished
	// that wait for it: a container adopts them when it finishes, so
	// each run of it (an attempt) takes its own.
	pending  map[string][]*allureStep
	order    []*allureStep // in finishing order
	left     int           // its steps left out past the cap
	problem  bool          // a test case of the sequence did not pass
	consoles []*consoleCursor
	// retried holds the top-level entries of the sequence that did not
	// pass in an attempt of it that was retried.
	retried map[string]bool
}

func (a *allureWriter) start(i int) {
	a.seqIdx = i
	a.seq = &a.seqs[i]
	a.key, a.pending, a.order, a.left, a.problem = "", map[string][]*allureStep{}, nil, 0, false
	a.retried = map[string]bool{}
	a.consoles = nil
	logs := a.seq.seq.Logs
	if len(logs) == 0 && a.opts.ConsoleDir != nil {
		logs = consoleLogs(a.opts.ConsoleDir(i))
	}
	names := make([]string, 0, len(logs))
	for n := range logs {
		names = append(names, n)
	}
	sort.Strings(names)
	h := &htmlData{events: a.events}
	for _, n := range names {
		if c := openConsoleCursor(a.opts.Files, n, h.resolve(logs[n])); c != nil {
			a.consoles = append(a.consoles, c)
		}
	}
}

func (a *allureWriter) end() {
	a.flush(nil)
	s := &a.seq.seq
	if s.Status == runner.Interrupted {
		// As in the JUnit report, a test case says the run was
		// interrupted, whatever the steps' own outcomes.
		start := s.StartedAt.UnixMilli()
		msg := cleanText(s.Error)
		if !strings.HasPrefix(msg, "interrupted") {
			msg = strings.TrimSuffix("interrupted; "+msg, "; ")
		}
		r := &allureResult{Name: interruptedCaseName, Status: "broken", Stage: "interrupted", Start: start, Stop: start + int64(s.DurationMS.D()/time.Millisecond),
			StatusDetails: &allureDetails{Message: "INTERRUPTED: " + msg}, Steps: []*allureStep{}, Attachments: []allureAttach{}}
		a.writeResult(r, interruptedCaseName)
	} else if s.Status != runner.Passed && s.Status != runner.Skipped && !a.problem {
		// The sequence failed outside its steps (setup, a timeout): a
		// test case says so, as in the JUnit report.
		name := "sequence"
		if !a.seq.steps {
			name = "setup"
		}
		start := s.StartedAt.UnixMilli()
		r := &allureResult{Name: name, Status: allureStatus(s.Status), Stage: "finished", Start: start, Stop: start + int64(s.DurationMS.D()/time.Millisecond),
			StatusDetails: &allureDetails{Message: cleanText(s.Error)}, Steps: []*allureStep{}, Attachments: []allureAttach{}}
		a.writeResult(r, name)
	}
	for _, c := range a.consoles {
		c.close()
	}
	a.consoles = nil
}

// step takes a step outside repeats; a top-level step ends its test case.
func (a *allureWriter) step(st *results.Step) {
	key := results.TopKey(st.Path)
	if a.key != "" && key != a.key {
		a.flush(nil)
	}
	a.key = key
	n := a.stepOf(st)
	n.Steps = append(n.Steps, a.adopt(st.Path)...)
	sortBranches(n.Steps, n.path, n.branches)
	if st.Path == key {
		a.flush(n)
		return
	}
	if len(a.order) >= allureCaseSteps {
		a.left++
		return
	}
	a.order = append(a.order, n)
	if parent := allureParent(st.Path); parent != "" {
		a.pending[parent] = append(a.pending[parent], n)
	}
}

// adopt returns the steps waiting for the container at path, marked as
// nested.
func (a *allureWriter) adopt(path string) []*allureStep {
	kids := a.pending[path]
	delete(a.pending, path)
	for _, k := range kids {
		k.nested = true
	}
	return kids
}

// allureParent is the path of the container a step is nested in, "" for
// none: a group's before_retry steps are its own, a sequence's finally
// and before_retry steps are entries of their own, and the steps of a
// repeat's iterations are in the repeat's summary.
func allureParent(path string) string {
	i := strings.LastIndexByte(path, '.')
	if i < 0 {
		return ""
	}
	parent := strings.TrimSuffix(path[:i], ".before_retry")
	// A branch's finally steps belong to the branch.
	parent = strings.TrimSuffix(parent, ".finally")
	if parent == "finally" || parent == "before_retry" || strings.Contains(parent, "#") {
		return ""
	}
	return parent
}

func (a *allureWriter) stepOf(st *results.Step) *allureStep {
	name := st.Kind
	if st.Name != "" {
		name += " " + cleanLine(st.Name)
	}
	start := a.seq.seq.StartedAt.Add(st.StartedMS.D())
	n := &allureStep{
		Name: cleanLine(padPath(st.Path, a.seq)) + " " + name, Status: allureStatus(st.Status), Stage: "finished",
		Start: start.UnixMilli(), Stop: start.Add(st.DurationMS.D()).UnixMilli(),
		StatusDetails: stepDetails(&st.StepBase, a.seq.seq.File), Steps: []*allureStep{}, Attachments: []allureAttach{}, path: st.Path,
	}
	if st.IsContainer() && st.Kind != "repeat" && st.Message == "" {
		// A group (or a branch) failed because a step in it did: that
		// step says why.
		n.StatusDetails = nil
	}
	if st.Message != "" && n.StatusDetails == nil {
		n.Parameters = append(n.Parameters, allureParameter{Name: "message", Value: cleanLine(st.Message)})
	}
	n.attempt = st.Attempt
	n.tags = st.Tags
	for _, p := range st.Params {
		// A matrix case's values, as Allure shows a parametrised test's.
		n.Parameters = append(n.Parameters, allureParameter{Name: cleanLine(p.Key), Value: csvScalar(p.Value)})
	}
	if names, ok := st.Data["branches"].([]any); ok && st.Kind == "parallel" {
		for _, b := range names {
			n.branches = append(n.branches, fmt.Sprint(b))
		}
	}
	a.allureAttempts(n, st)
	for _, p := range st.Attachments {
		if at, ok := a.attachFile(p); ok {
			n.Attachments = append(n.Attachments, at)
		}
	}
	n.Parameters = append(n.Parameters, allureMeasureParams(st)...)
	if r := st.Repeat; r != nil {
		n.Parameters = append(n.Parameters,
			allureParameter{Name: "iterations", Value: fmt.Sprintf("%d (%d passed, %d failed, %d error)", r.Iterations, r.Passed, r.Failed, r.Errored)},
			allureParameter{Name: "iteration time", Value: fmt.Sprintf("min %s, median %s, p99 %s, max %s ms", fmtMS(r.MinMS), fmtMS(r.MedianMS), fmtMS(r.P99MS), fmtMS(r.MaxMS))})
		if r.MoreFailures > 0 {
			n.Parameters = append(n.Parameters, allureParameter{Name: "failing iterations left out", Value: fmt.Sprint(r.MoreFailures)})
		}
		its := append([]results.Iteration(nil), r.Failures...)
		for _, it := range []*results.Iteration{r.First, r.Last} {
			if it != nil && !isProblem(it.Status) {
				its = append(its, *it)
			}
		}
		for _, it := range its {
			is := a.seq.seq.StartedAt.Add(it.StartedMS.D())
			in := &allureStep{Name: fmt.Sprintf("iteration %d", it.Index), Status: allureStatus(it.Status), Stage: "finished",
				Start: is.UnixMilli(), Stop: is.Add(it.DurationMS.D()).UnixMilli(), Steps: []*allureStep{}, Attachments: []allureAttach{}}
			for i := range it.Detail {
				in.Steps = append(in.Steps, a.stepOf(&results.Step{StepBase: it.Detail[i]}))
			}
			if it.More > 0 {
				in.Parameters = append(in.Parameters, allureParameter{Name: "steps left out", Value: fmt.Sprint(it.More)})
			}
			n.Steps = append(n.Steps, in)
		}
	}
	return n
}

// stepDetails are a step's message, expected, received and position, for
// a step that did not pass.
func stepDetails(st *results.StepBase, file string) *allureDetails {
	if !isProblem(st.Status) {
		return nil
	}
	var trace strings.Builder
	if st.Expected != "" {
		fmt.Fprintf(&trace, "expected: %s\n", cleanText(st.Expected))
	}
	if st.Received != "" {
		fmt.Fprintf(&trace, "received: %s\n", cleanText(st.Received))
	}
	if loc := locationOf(st.File, st.Line, st.Column, file); loc != "" {
		fmt.Fprintf(&trace, "at %s\n", loc)
	}
	return &allureDetails{Message: cleanText(st.Message), Trace: trace.String()}
}

// flush writes the test case gathered, whose top-level step is top (nil
// when it never came, as for a sequence cut short).
func (a *allureWriter) flush(top *allureStep) {
	if a.key == "" || (top == nil && len(a.order) == 0) {
		a.key = ""
		return
	}
	// The steps no container took: those of containers never finished
	// (a sequence cut short, or past the cap).
	roots := []*allureStep{}
	for _, n := range a.order {
		if !n.nested {
			roots = append(roots, n)
		}
	}
	r := &allureResult{Stage: "finished", Steps: roots, Attachments: []allureAttach{}}
	if top != nil {
		r.Name, r.Status, r.Start, r.Stop, r.StatusDetails = top.Name, top.Status, top.Start, top.Stop, top.StatusDetails
		r.Parameters = top.Parameters
		r.Attachments = top.Attachments
		r.Steps = append(top.Steps, roots...)
		r.attempt, r.tags = top.attempt, top.tags
		a.seqAttempt(r)
		if len(top.attempts) > 1 {
			// Its earlier attempts are results of their own.
			r.Steps = a.earlierAttempts(r, top.attempts)
		}
	} else {
		r.Name, r.Status = a.key+" (cut short)", "broken"
		r.StatusDetails = &allureDetails{Message: results.CutShort}
		r.Start, r.Stop = roots[0].Start, roots[len(roots)-1].Stop
	}
	if r.StatusDetails == nil && r.Status != "passed" && r.Status != "skipped" {
		// A group's own status: the first step that did not pass says why.
		r.StatusDetails = firstProblem(r.Steps)
	}
	if a.left > 0 {
		r.Description = fmt.Sprintf("%d more steps of this test case are left out; the JSON report and the event file have them.", a.left)
	}
	if r.Status != "passed" && r.Status != "skipped" {
		a.problem = true
	}
	a.writeResult(r, a.key)
	a.key, a.pending, a.order, a.left = "", map[string][]*allureStep{}, nil, 0
}

func firstProblem(steps []*allureStep) *allureDetails {
	for _, s := range steps {
		if s.StatusDetails != nil {
			return s.StatusDetails
		}
		if d := firstProblem(s.Steps); d != nil {
			return d
		}
	}
	return nil
}

// sortBranches puts the branches of the parallel step at path, among
// steps, in the order they are written (branches), not the order they
// finished.
func sortBranches(steps []*allureStep, path string, branches []string) {
	if len(branches) == 0 {
		return
	}
	rank := func(s *allureStep) int {
		if i := slices.Index(branches, strings.TrimPrefix(s.path, path+".")); i >= 0 {
			return i
		}
		return len(branches)
	}
	sort.SliceStable(steps, func(i, j int) bool { return rank(steps[i]) < rank(steps[j]) })
}

package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hilrun/hilrun/internal/engine"
	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/proc/tmpdir"
	"github.com/hilrun/hilrun/pkg/report"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// runStream is where a run's results go: the progress console, the event
// stream on disk, and where the consoles log when reports need their
// timelines without --log-dir.
type runStream struct {
	console     *report.Console
	events      *results.Stream
	stamp       string
	consoleRoot string
	cleanup     []func()
	// bad are the benches marked bad, notRun the sequences they did not
	// run.
	bad    []results.BadBench
	notRun []string
}

func (s *runStream) close() {
	if s == nil {
		return
	}
	if s.console != nil {
		s.console.Flush()
	}
	if s.events != nil {
		s.events.Close()
	}
	for i := len(s.cleanup) - 1; i >= 0; i-- {
		s.cleanup[i]()
	}
}

// openStream opens the run's progress console and event stream. Every
// finished step goes to the event stream on disk, not to memory; the
// reports are written from it. Without --log-dir it lives in a private
// folder removed at exit, and so do the consoles' logs that the HTML
// report and Allure show.
func openStream(ios *IO, opts *RunOptions) (*runStream, error) {
	progress := ios.Out
	if opts.JSON == "-" {
		progress = ios.ErrOut
	}
	color := false
	if f, ok := progress.(*os.File); ok {
		color = report.ColorFor(f, environ.Host())
	}
	s := &runStream{
		// What the console prints is held off the steps' path and written
		// as the run waits for its devices (see report.ConsoleOptions.Hold).
		console: report.NewConsole(progress, report.ConsoleOptions{Color: color, Verbose: opts.Verbose, Summary: results.Options{MaxFailures: opts.MaxFailures}, Hold: report.DefaultHold}),
		stamp:   time.Now().UTC().Format("20060102T150405Z"),
	}
	eventsPath := ""
	if opts.LogDir != "" {
		eventsPath = filepath.Join(opts.LogDir, s.stamp+"-"+results.EventFile)
		if err := report.WriteRunInfo(hostGates().Files, filepath.Join(opts.LogDir, s.stamp+"-"+report.RunInfoFile), opts.info); err != nil {
			fmt.Fprintf(ios.ErrOut, "hilrun: %v\n", err)
		}
	} else {
		tmp, err := tmpdir.New("events")
		if err != nil {
			return s, infra(fmt.Errorf("make a folder for the event stream: %w", err))
		}
		s.cleanup = append(s.cleanup, func() { tmp.Remove() })
		eventsPath = filepath.Join(tmp.Path, results.EventFile)
		if opts.HTML != "" || opts.Allure != "" {
			s.consoleRoot = filepath.Join(tmp.Path, "consoles")
			opts.consoleRoot = s.consoleRoot
		}
	}
	events, err := results.Create(eventsPath)
	if err != nil {
		return s, infra(err)
	}
	s.events = events
	if opts.LogDir != "" {
		// A full log disk must not cost the reports their steps: the
		// stream goes on in a private folder, which is removed at exit.
		var spare *tmpdir.Dir
		s.cleanup = append(s.cleanup, func() { spare.Remove() })
		events.Spare = func() (string, error) {
			var err error
			if spare, err = tmpdir.New("events"); err != nil {
				return "", err
			}
			return filepath.Join(spare.Path, results.EventFile), nil
		}
	}
	return s, nil
}

// warnTo writes warnings to w, one line each, after what the progress
// console holds: a warning comes after the steps before it.
func (s *runStream) warnTo(w io.Writer) func(string) {
	warn := warnTo(w)
	return func(msg string) {
		s.console.Flush()
		warn(msg)
	}
}

// runList is what a run without --pool runs: the plans, and the
// recovery ladder of each plan's bench (nil entries, or nil, for none).
type runList struct {
	plans   []*plan.Plan
	ladders []*runLadder
}

// ladder is the ladder of plan i's bench, or nil.
func (l runList) ladder(i int) *runLadder {
	if i < len(l.ladders) {
		return l.ladders[i]
	}
	return nil
}

// runPlans runs the plans one after the other, each on a bench of its own
// with its logs in a folder of its own, until the last, an interrupt, or
// with -x the first that does not pass. A plan whose bench has a ladder
// runs after its health check passes (or a climb of the ladder makes it
// pass); one whose bench went bad does not run. An error is the bench's:
// a log folder that could not be made.
func runPlans(in *interrupts, ios *IO, opts *RunOptions, list runList, s *runStream) ([]runner.SequenceResult, error) {
	var seqResults []runner.SequenceResult
	lr := ladderRun{in: in, warn: warnTo(ios.ErrOut), record: s.record}
	s.ladderLogs(opts, list.ladders)
	plans := list.plans
	for i, pl := range plans {
		seq := pl.Sequence()
		lr.secrets = pl.Secrets()
		// A sequence that does not run (deselected, quarantined) opens
		// nothing, and needs no check.
		if l := list.ladder(i); l != nil && seq.Skip == "" && !l.before(lr, seq.File) {
			if in.Run.Err() != nil {
				break
			}
			s.notRun = append(s.notRun, seq.File)
			seqResults = append(seqResults, recordNotRun(runner.Tee(s.events, s.console), seq, "", "the bench is bad: "+l.bad))
			continue
		}
		if in.Run.Err() != nil {
			break
		}
		res, err := runOnePlan(in, ios, opts, i, pl, s)
		if err != nil {
			return seqResults, err
		}
		seqResults = append(seqResults, *res)
		if in.Run.Err() != nil {
			break
		}
		if opts.ExitFirst && res.Status != runner.Passed && i+1 < len(plans) {
			fmt.Fprintf(ios.ErrOut, "hilrun: -x: %s did not pass, so the %s after it did not run\n", seq.Name, count(len(plans)-i-1, "sequence"))
			break
		}
		if l := list.ladder(i); l != nil && laterOn(list.ladders, i, l) {
			l.after(lr, seq.File, res)
		}
	}
	return seqResults, nil
}

// runOnePlan runs plan i on a bench of its own, its logs in a folder of
// its own.
func runOnePlan(in *interrupts, ios *IO, opts *RunOptions, i int, pl *plan.Plan, s *runStream) (*runner.SequenceResult, error) {
	seq := pl.Sequence()
	logDir := ""
	if opts.LogDir != "" {
		logDir = filepath.Join(opts.LogDir, s.stamp+"-"+safeName(seq.Name))
		if err := os.MkdirAll(logDir, 0o777); err != nil {
			return nil, infra(fmt.Errorf("create the log folder: %w", err))
		}
	}
	artifacts, err := artifactDir(seq, logDir, s.stamp)
	if err != nil {
		return nil, infra(err)
	}
	consoleDir := logDir
	if s.consoleRoot != "" {
		consoleDir = filepath.Join(s.consoleRoot, strconv.Itoa(i))
	}
	// Consoles log into consoleDir; without --log-dir that is a
	// private folder gone at exit, which no report names.
	bench := engine.NewBench(engine.BenchConfig{Gates: hostGates(), LogDir: logDir, ConsoleLogDir: consoleDir, HideLogs: s.consoleRoot != "", Warn: s.warnTo(ios.ErrOut), Secrets: pl.Secrets()})
	res := pl.Run(in.Run, bench, plan.Output{Sink: runner.Tee(s.events, s.console), ArtifactDir: artifacts, FinallyContext: in.Fin})
	// The transcripts are in the event stream; the summary needs none.
	res.Transcripts = nil
	if artifacts != "" && logDir == "" {
		// Only when no step wrote there: it removes empty folders only.
		os.Remove(artifacts)
	}
	return res, nil
}

// finishRun writes the summary and the reports and turns the results into
// the exit code.
func finishRun(in *interrupts, ios *IO, opts *RunOptions, s *runStream, seqResults []runner.SequenceResult) error {
	if len(seqResults) > 1 {
		s.console.Summary(seqResults)
	}
	s.console.BadBenches(s.bad)
	if err := s.console.Err(); err != nil {
		fmt.Fprintf(ios.ErrOut, "hilrun: the progress report stopped (%v); the run went on to its end\n", err)
	}
	streamErr := s.events.Close()
	err := in.reports(func(ctx context.Context) error { return writeReports(ctx, ios, opts, s.events.Path(), streamErr) })
	if errors.Is(err, errAbandoned) {
		return interrupted(err)
	}
	if inc := s.events.Incomplete(); inc != nil {
		err = errors.Join(err, fmt.Errorf("the event stream in the log folder is incomplete (the reports were written from a whole copy): %w", inc))
	}
	if err != nil {
		return infra(err)
	}
	code := opts.Retry.runCode(ios, seqResults)
	if in.Run.Err() != nil {
		// Interrupted between sequences (while a bench's ladder
		// climbed): every sequence that ran may have passed, but the
		// run did not finish.
		code = ExitInterrupted
	}
	if len(s.notRun) > 0 {
		fmt.Fprintf(ios.ErrOut, "hilrun: %s not run (the bench is bad): %s\n", count(len(s.notRun), "sequence"), strings.Join(s.notRun, ", "))
		if code == ExitPassed || code == ExitFailed {
			code = ExitInfra
		}
	}
	if code != ExitPassed {
		return silent(code)
	}
	return nil
}

package engine

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/hilrun/hilrun/pkg/build"
	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/pio"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// Builder runs the tools of build and upload steps with pkg/build. Each
// tool's whole output goes to logFile(step) when that is not "", and every
// output line to the runner's progress and to line, when not nil. The tools
// start through procs.
func Builder(logFile func(*steps.Step) string, line func(string), procs process.Policy) runner.Builder {
	return PIOBuilder(nil)(logFile, line, procs)
}

// PIOBuilder is Builder with the pio_test steps run by r; nil runs the pio
// on PATH. Tests give it a replay of recorded PlatformIO outputs.
func PIOBuilder(r pio.Runner) func(logFile func(*steps.Step) string, line func(string), procs process.Policy) runner.Builder {
	return func(logFile func(*steps.Step) string, line func(string), procs process.Policy) runner.Builder {
		return builder(logFile, line, procs, r)
	}
}

func builder(logFile func(*steps.Step) string, line func(string), procs process.Policy, pioRunner pio.Runner) runner.Builder {
	return func(ctx context.Context, req runner.BuildRequest) (runner.BuildOutcome, error) {
		st := req.Step
		b := st.Build
		opts := build.Options{Runner: process.Runner{Policy: procs}, Progress: func(l string) {
			if req.Progress != nil {
				req.Progress(l)
			}
			if line != nil {
				line(l)
			}
		}}
		switch {
		case req.Log != "":
			opts.LogFile = req.Log
		case logFile != nil:
			opts.LogFile = logFile(st)
		}
		if st.Kind == steps.KindPIOTest {
			r := pioRunner
			if r == nil {
				r = pio.Exec{Runner: process.Runner{Policy: procs}}
			}
			return pioTest(ctx, req, r, opts)
		}
		var res *build.Result
		var err error
		switch {
		case b.PIO != nil && st.Kind == steps.KindUpload:
			res, err = pio.Upload(ctx, pio.UploadSpec{ProjectDir: b.PIO.ProjectDir, Env: b.PIO.Env, Port: req.Port, Verbose: b.PIO.Verbose}, opts)
		case b.PIO != nil:
			if b.PIO.Clean {
				if res, err = pio.Clean(ctx, pio.CleanSpec{ProjectDir: b.PIO.ProjectDir, Env: b.PIO.Env}, opts); err != nil || !res.OK {
					break
				}
			}
			res, err = pio.Build(ctx, pio.BuildSpec{ProjectDir: b.PIO.ProjectDir, Env: b.PIO.Env, Verbose: b.PIO.Verbose}, opts)
		default:
			res, err = build.Command(ctx, build.CommandSpec{Command: req.Command, Shell: b.Shell, Dir: b.Dir, Env: req.Env, ELF: b.ELF}, opts)
		}
		if err != nil {
			return runner.BuildOutcome{}, err
		}
		return runner.BuildOutcome{OK: res.OK, Summary: res.Summary, Data: res.Data()}, nil
	}
}

// pioTest runs a pio_test step: pio test with its JSON report, each test
// case a row of the step's data ("cases"), which the reports show as test
// cases of their own. Failing cases fail the step; a run that gives no
// report is the bench's problem when pio could not run, else a failure
// with PlatformIO's last words.
func pioTest(ctx context.Context, req runner.BuildRequest, r pio.Runner, opts build.Options) (runner.BuildOutcome, error) {
	b := req.Step.Build
	var log io.Writer
	if opts.LogFile != "" {
		if err := os.MkdirAll(filepath.Dir(opts.LogFile), 0o755); err != nil {
			return runner.BuildOutcome{}, fmt.Errorf("pio_test log: %w", err)
		}
		f, err := os.Create(opts.LogFile)
		if err != nil {
			return runner.BuildOutcome{}, fmt.Errorf("pio_test log: %w", err)
		}
		defer f.Close()
		log = f
	}
	c := &pio.Client{Runner: r, Progress: opts.Progress, Log: log}
	spec := pio.TestSpec{ProjectDir: b.PIO.ProjectDir, Env: b.PIO.Env, UploadPort: req.Port}
	if t := b.PIO.Test; t != nil {
		spec.Filter, spec.Ignore, spec.TestPort, spec.WithoutUploading = t.Filter, t.Ignore, t.TestPort, t.WithoutUploading
	}
	rep, out, err := c.Test(ctx, spec)
	if err != nil {
		if out == nil || ctx.Err() != nil {
			return runner.BuildOutcome{}, err
		}
		return runner.BuildOutcome{OK: false, Summary: err.Error(), Data: map[string]any{"exit_code": out.ExitCode, "tail": tailLines(out.Text, 20)}}, nil
	}
	return runner.BuildOutcome{OK: rep.Passed(), Summary: testSummary(rep), Data: TestData(rep)}, nil
}

func testSummary(rep *pio.TestReport) string {
	passed := rep.Cases - rep.Failures - rep.Errors - rep.Skipped
	s := fmt.Sprintf("%d test cases: %d passed", rep.Cases, passed)
	if rep.Failures > 0 {
		s += fmt.Sprintf(", %d failed", rep.Failures)
	}
	if rep.Errors > 0 {
		s += fmt.Sprintf(", %d errored", rep.Errors)
	}
	if rep.Skipped > 0 {
		s += fmt.Sprintf(", %d skipped", rep.Skipped)
	}
	for _, su := range rep.Suites {
		for _, c := range su.Cases {
			if c.Status == "FAILED" || c.Status == "ERRORED" {
				return s + fmt.Sprintf("; first failure %s/%s: %s (%s:%d)", su.Name, c.Name, c.Message, c.File, c.Line)
			}
		}
	}
	return s
}

// TestData is a pio test report as a step's data: the counts, and "cases",
// one map per test case (suite, env, name, status, message, file, line,
// duration_ms), which the JUnit report turns into test cases.
func TestData(rep *pio.TestReport) map[string]any {
	cases := []any{}
	for _, su := range rep.Suites {
		for _, c := range su.Cases {
			cases = append(cases, map[string]any{"suite": su.Name, "env": su.Env, "name": c.Name, "status": c.Status,
				"message": c.Message, "file": c.File, "line": c.Line, "duration_ms": c.DurationS * 1000})
		}
	}
	return map[string]any{"test_cases": rep.Cases, "failures": rep.Failures, "errors": rep.Errors, "skipped": rep.Skipped, "cases": cases}
}

// tailLines is the last n lines of text.
func tailLines(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

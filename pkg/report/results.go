package report

import (
	"fmt"
	"strconv"
	"time"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// isProblem reports whether a step or sequence with status s did not pass and
// was not skipped: it failed, errored or was interrupted.
func isProblem(s runner.Status) bool {
	return s != runner.Passed && s != runner.Skipped
}

// isErrorLike reports whether s means the bench, not the device, went wrong.
// Reports with no word for an interruption count it as an error.
func isErrorLike(s runner.Status) bool {
	return s == runner.Errored || s == runner.Interrupted
}

// reportStatus is the status the JUnit and JSON reports show for s: the
// runner's own, except that Interrupted reads "error".
func reportStatus(s runner.Status) string {
	if s == runner.Interrupted {
		return string(runner.Errored)
	}
	return string(s)
}

// stampMS is a wall-clock time as the reports show it: UTC, to the
// millisecond, always three digits ("2025-03-14T10:00:00.250Z"); "" for
// the zero time.
func stampMS(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02T15:04:05.000Z")
}

// consoleLabel names a console in a report's words: "console dut", or
// just "console" for the console a bench names "console", not "console
// console".
func consoleLabel(name string) string {
	name = cleanLine(name)
	if name == "console" || name == "" {
		return "console"
	}
	return "console " + name
}

// isContainer reports whether s is a group, a repeat, a parallel or a
// branch, which reports after the steps it contains.
func isContainer(s *runner.StepResult) bool {
	return steps.IsContainer(steps.Kind(s.Kind))
}

// seconds formats d in seconds with millisecond precision.
func seconds(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
}

// location formats where s is, as FILE:LINE:COL, falling back to file when
// the step names none; "" when nothing is known.
func location(s *results.Step, file string) string {
	return locationOf(s.File, s.Line, s.Column, file)
}

// locationOf formats FILE:LINE:COL, with fallback for an empty file.
func locationOf(file string, line, col int, fallback string) string {
	if file == "" {
		file = fallback
	}
	if line <= 0 {
		return cleanLine(file)
	}
	loc := fmt.Sprintf("%s:%d", file, line)
	if col > 0 {
		loc += fmt.Sprintf(":%d", col)
	}
	return cleanLine(loc)
}

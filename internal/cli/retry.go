package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/pflag"

	"github.com/hilrun/hilrun/pkg/plan"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// RetryFlags are --retries and --fail-on-flaky.
type RetryFlags struct {
	// Retries is how many times a sequence whose file does not say
	// retries: runs again after an attempt that did not pass.
	Retries int
	// FailOnFlaky makes a sequence that passed only after a retry a
	// failure (exit 1).
	FailOnFlaky bool
}

func (r *RetryFlags) register(f *pflag.FlagSet) {
	f.IntVar(&r.Retries, "retries", 0, fmt.Sprintf("run each sequence whose file does not say retries: again up to `N` times (at most %d) after an attempt that did not pass, from its first step, its before_retry: steps first; one that passes after a retry is flaky", steps.MaxRetries))
	f.BoolVar(&r.FailOnFlaky, "fail-on-flaky", false, "fail the run (exit 1) when a sequence passed only after a retry of it or of a group in it")
}

// check refuses a --retries out of range, as invalid input.
func (r *RetryFlags) check() error {
	if r.Retries < 0 || r.Retries > steps.MaxRetries {
		return invalid(fmt.Errorf("--retries %d: want a whole number from 0 to %d", r.Retries, steps.MaxRetries))
	}
	return nil
}

// apply gives the plans the run's retries.
func (r *RetryFlags) apply(plans []*plan.Plan) {
	for i, pl := range plans {
		plans[i] = pl.WithRetries(r.Retries)
	}
}

// runCode is the exit code of a run's results: resultCode's, and with
// --fail-on-flaky a failure when a sequence was flaky, which it says.
func (r *RetryFlags) runCode(ios *IO, seqResults []runner.SequenceResult) int {
	code := resultCode(seqResults)
	if code != ExitPassed || !r.FailOnFlaky {
		return code
	}
	var flaky []string
	for _, res := range seqResults {
		if res.Flaky {
			flaky = append(flaky, res.Name)
		}
	}
	if len(flaky) == 0 {
		return code
	}
	fmt.Fprintf(ios.ErrOut, "hilrun: --fail-on-flaky: %s passed only after a retry: %s\n", count(len(flaky), "sequence"), strings.Join(flaky, ", "))
	return ExitFailed
}

// retryNote says, for --list, the retries of seq: its own, else the
// run's, and those of its groups: " retries 2" or "".
func retryNote(seq *steps.Sequence, runRetries int) string {
	n := runRetries
	if r := seq.Retry; r != nil && r.Set {
		n = r.Count
	}
	var groups []string
	steps.Walk(seq, func(st *steps.Step) {
		if st.Kind == steps.KindGroup && st.Retry.Retries() > 0 {
			groups = append(groups, fmt.Sprintf("%s %d", st.Name, st.Retry.Count))
		}
	})
	note := ""
	if n > 0 {
		note = fmt.Sprintf(" retries %d", n)
	}
	if len(groups) > 0 {
		note += " group retries: " + strings.Join(groups, ", ")
	}
	return note
}

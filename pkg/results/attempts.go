package results

import "github.com/hilrun/hilrun/pkg/runner"

// RecordAttempt ends an attempt of a sequence or a group with retries,
// after its steps: Attempt says how it went.
const RecordAttempt = "attempt"

// Attempt is one attempt of a sequence or a group with retries, as every
// report shows it: "attempt 2 of 3", its status and timing, what its first
// step that did not pass said, and what the consoles printed meanwhile.
type Attempt struct {
	// Scope is the path of the group retried, "" for the sequence.
	Scope      string        `json:"scope"`
	Name       string        `json:"name"`
	Attempt    int           `json:"attempt"`
	Of         int           `json:"of"`
	Status     runner.Status `json:"status"`
	StartedMS  Millis        `json:"started_ms"`
	DurationMS Millis        `json:"duration_ms"`
	Message    string        `json:"message,omitempty"`
	Output     string        `json:"output,omitempty"`
	// Retried says another attempt followed: the steps of this one are
	// then counted as retried, not by their status.
	Retried    bool              `json:"retried,omitempty"`
	Executions runner.Executions `json:"executions"`
}

// Label is "attempt 2 of 3".
func (a *Attempt) Label() string {
	r := runner.AttemptResult{Attempt: a.Attempt, Of: a.Of}
	return r.String()
}

// AttemptFrom converts a runner attempt.
func AttemptFrom(a *runner.AttemptResult) Attempt {
	return Attempt{
		Scope: a.Scope, Name: a.Name, Attempt: a.Attempt, Of: a.Of, Status: a.Status,
		StartedMS: MS(a.Started), DurationMS: MS(a.Duration), Message: a.Message, Output: a.Output,
		Retried: a.Retried, Executions: a.Executions,
	}
}

// attemptsFrom converts a runner's list of attempts; nil when empty.
func attemptsFrom(list []runner.AttemptResult) []Attempt {
	if len(list) == 0 {
		return nil
	}
	out := make([]Attempt, len(list))
	for i := range list {
		out[i] = AttemptFrom(&list[i])
	}
	return out
}

// Failed lists the attempts that did not pass, in order.
func Failed(list []Attempt) []Attempt {
	var out []Attempt
	for _, a := range list {
		if a.Status != runner.Passed {
			out = append(out, a)
		}
	}
	return out
}

// retire moves the executions of an attempt that was retried from their
// statuses to Retried.
func (c *Counts) retire(e runner.Executions) {
	c.Passed -= e.Passed
	c.Failed -= e.Failed
	c.Errored -= e.Errored
	c.Skipped -= e.Skipped
	c.Interrupted -= e.Interrupted
	c.Retried += e.Total()
}

// attempt takes an attempt record: the executions of an attempt that was
// retried leave the counts, and OnAttempt sees it.
func (z *Summarizer) attempt(a *Attempt) {
	if a.Retried {
		z.counts.retire(a.Executions)
	}
	if z.OnAttempt != nil {
		z.OnAttempt(z.seq, a)
	}
}

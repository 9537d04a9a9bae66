package results

import (
	"fmt"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/redact"
	"github.com/hilrun/hilrun/pkg/runner"
)

// Record types of a bench's recovery ladder. They belong to no sequence:
// their Seq means nothing, and readers of sequences pass them by.
const (
	// RecordRecovery is one climb of a bench's ladder: Recovery says why
	// it ran, which rungs ran and whether the bench came back.
	RecordRecovery = "recovery"
	// RecordBadBench marks a bench bad for the rest of the run: BadBench
	// says why. It follows the recovery that failed.
	RecordBadBench = "bad_bench"
)

// Triggers of a recovery.
const (
	// TriggerHealth: the health check failed before a sequence.
	TriggerHealth = "health"
	// TriggerError: a sequence ended in a bench error (exit 3).
	TriggerError = "error"
)

// Recovery is one climb of a bench's recovery ladder, as every report
// shows it. The sequence that ended in a bench error is reported as it
// ended; the climb decides only whether the bench takes more work.
type Recovery struct {
	Bench string `json:"bench"`
	// Trigger is TriggerHealth or TriggerError.
	Trigger string `json:"trigger"`
	// Sequence is the file of the sequence the climb ran before (health)
	// or after (error).
	Sequence   string    `json:"sequence,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	DurationMS Millis    `json:"duration_ms"`
	// Check is the health check that ran first: after a bench error the
	// rungs run only when it fails too.
	Check *Check `json:"check,omitempty"`
	// Rungs are the rungs that ran, in order, up to the one after which
	// the health check passed.
	Rungs     []RungResult `json:"rungs,omitempty"`
	Recovered bool         `json:"recovered"`
	// Interrupted says the run was interrupted during the climb: the
	// bench is not marked bad for it.
	Interrupted bool `json:"interrupted,omitempty"`
}

// Check is one run of a health check, or of a rung: how it ended and what
// its first step that did not pass said.
type Check struct {
	Status     runner.Status `json:"status"`
	Message    string        `json:"message,omitempty"`
	DurationMS Millis        `json:"duration_ms"`
}

// RungResult is one rung that ran, and the health check after it.
type RungResult struct {
	// Index counts the ladder's rungs from 1; Label is what the rung
	// does ("power cycle"), and File, Line and Column where it is written.
	Index  int    `json:"index"`
	Label  string `json:"label"`
	File   string `json:"file,omitempty"`
	Line   int    `json:"line,omitempty"`
	Column int    `json:"column,omitempty"`
	Check
	Health Check `json:"health"`
}

// Worked reports whether the health check passed after the rung.
func (r *RungResult) Worked() bool { return r.Health.Status == runner.Passed }

// CheckFrom is how a health check or rung run ended: its status, and the
// run's error or the message of its first step that did not pass.
func CheckFrom(r *runner.SequenceResult) Check {
	c := Check{Status: r.Status, Message: r.Error, DurationMS: MS(r.Duration)}
	if c.Message == "" && r.Status != runner.Passed {
		for _, st := range r.Steps {
			if st.Status != runner.Passed && st.Status != runner.Skipped && st.Kind != "group" && st.Kind != "repeat" {
				c.Message = st.Message
				break
			}
		}
	}
	return c
}

// Outcome is the climb in words: "recovered by rung 2 (power cycle)",
// "not recovered: 3 rungs tried".
func (r *Recovery) Outcome() string {
	if r.Recovered {
		if n := len(r.Rungs); n > 0 {
			last := r.Rungs[n-1]
			return fmt.Sprintf("recovered by rung %d (%s)", last.Index, last.Label)
		}
		return "healthy: the health check passed, no rung needed"
	}
	n := len(r.Rungs)
	switch {
	case r.Interrupted:
		return fmt.Sprintf("interrupted after %s", countRungs(n))
	case n == 0:
		return "not recovered: the bench has no rungs to try"
	}
	return "not recovered: " + countRungs(n) + " tried"
}

// countRungs is "1 rung", "3 rungs".
func countRungs(n int) string {
	if n == 1 {
		return "1 rung"
	}
	return fmt.Sprintf("%d rungs", n)
}

// Why says what started the climb: "the health check failed before
// boot.yaml: timed out ...", "boot.yaml ended in a bench error".
func (r *Recovery) Why() string {
	if r.Trigger == TriggerError {
		return r.Sequence + " ended in a bench error"
	}
	why := "the health check failed"
	if r.Sequence != "" {
		why += " before " + r.Sequence
	}
	if r.Check != nil && r.Check.Message != "" {
		why += ": " + r.Check.Message
	}
	return why
}

// BadReason is why a bench whose climb failed is bad, in one line: what
// started the climb, the rungs tried and what the last health check said.
func (r *Recovery) BadReason() string {
	var b strings.Builder
	if r.Trigger == TriggerError {
		b.WriteString(r.Sequence + " ended in a bench error, and the health check failed after it")
	} else {
		b.WriteString("the health check failed")
		if r.Sequence != "" {
			b.WriteString(" before " + r.Sequence)
		}
	}
	msg := ""
	if r.Check != nil {
		msg = r.Check.Message
	}
	switch n := len(r.Rungs); n {
	case 0:
	case 1:
		fmt.Fprintf(&b, " and after rung 1 (%s)", r.Rungs[0].Label)
	default:
		labels := make([]string, n)
		for i, g := range r.Rungs {
			labels[i] = g.Label
		}
		fmt.Fprintf(&b, " and after each of %d rungs (%s)", n, strings.Join(labels, ", "))
	}
	if n := len(r.Rungs); n > 0 {
		msg = r.Rungs[n-1].Health.Message
	}
	if msg != "" {
		b.WriteString(": " + msg)
	}
	if len(r.Rungs) == 0 {
		b.WriteString("; the bench has no rungs to try")
	}
	return b.String()
}

// Redact replaces each secret's value in what r says (its sequence, the
// rungs' labels as written, the messages) by ***name***, as a step's
// result is: a bench file may hold a value as it is typed.
func (r *Recovery) Redact(s *redact.Set) {
	if s.Empty() {
		return
	}
	r.Sequence = s.String(r.Sequence)
	if r.Check != nil {
		c := *r.Check
		c.Message = s.String(c.Message)
		r.Check = &c
	}
	rungs := make([]RungResult, len(r.Rungs))
	for i, g := range r.Rungs {
		g.Label, g.Message, g.Health.Message = s.String(g.Label), s.String(g.Message), s.String(g.Health.Message)
		rungs[i] = g
	}
	r.Rungs = rungs
}

// BadBench is a bench marked bad for the rest of a run: it takes no more
// work, and the pool's other benches finish its queue.
type BadBench struct {
	Bench  string    `json:"bench"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// BenchHooks, embedded in a Summarizer, receive a run's recovery records
// as they are read, in order.
type BenchHooks struct {
	OnRecovery func(*Recovery)
	OnBadBench func(*BadBench)
}

// benchRecord passes r to the hook of its type, if it is a recovery
// record.
func (h *BenchHooks) benchRecord(r *Record) {
	switch {
	case r.Type == RecordRecovery && r.Recovery != nil && h.OnRecovery != nil:
		h.OnRecovery(r.Recovery)
	case r.Type == RecordBadBench && r.BadBench != nil && h.OnBadBench != nil:
		h.OnBadBench(r.BadBench)
	}
}

// Recovered records a climb of a bench's ladder in the event file.
func (s *Stream) Recovered(r *Recovery) {
	s.add(Record{Type: RecordRecovery, Recovery: r})
}

// MarkedBad records a bench marked bad in the event file.
func (s *Stream) MarkedBad(b *BadBench) {
	s.add(Record{Type: RecordBadBench, BadBench: b})
}

// Benches is what a run's event file says of its benches: every climb of
// a ladder, and the benches marked bad, in order.
type Benches struct {
	Recoveries []Recovery
	Bad        []BadBench
}

// Hooks returns hooks that collect into b.
func (b *Benches) Hooks() BenchHooks {
	return BenchHooks{
		OnRecovery: func(r *Recovery) { b.Recoveries = append(b.Recoveries, *r) },
		OnBadBench: func(x *BadBench) { b.Bad = append(b.Bad, *x) },
	}
}

// ClimbInterrupted reports whether an interrupt ended a climb: the run
// stopped between sequences.
func (b *Benches) ClimbInterrupted() bool {
	for _, r := range b.Recoveries {
		if r.Interrupted {
			return true
		}
	}
	return false
}

// Empty reports whether no ladder ran.
func (b *Benches) Empty() bool { return len(b.Recoveries) == 0 && len(b.Bad) == 0 }

// ByBench lists the recoveries of each bench in the order the benches
// first appear, and says why each bad one is bad.
func (b *Benches) ByBench() (names []string, recoveries map[string][]Recovery, bad map[string]string) {
	recoveries, bad = map[string][]Recovery{}, map[string]string{}
	seen := map[string]bool{}
	add := func(name string) {
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
	}
	for _, r := range b.Recoveries {
		add(r.Bench)
		recoveries[r.Bench] = append(recoveries[r.Bench], r)
	}
	for _, x := range b.Bad {
		add(x.Bench)
		bad[x.Bench] = x.Reason
	}
	return names, recoveries, bad
}

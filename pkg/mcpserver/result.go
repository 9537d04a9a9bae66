package mcpserver

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/report"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// maxResultSteps and maxResultBytes bound the steps a sequence result
// lists: past maxResultSteps, the result keeps the first and last
// maxResultSteps/2 steps and the steps between that did not pass (up to
// results.DefaultMaxFailures); past maxResultBytes of JSON, steps that did
// not pass are kept first, then the others in order. The result counts the
// steps left out and names the report resource, which has them all.
// Repeats count as one step each: their iterations are summarised by the
// summary rule.
const (
	maxResultSteps = 1000
	maxResultBytes = 1 << 20
)

type sequenceResult struct {
	RunID      string         `json:"run_id"`
	Name       string         `json:"name"`
	Passed     bool           `json:"passed"`
	Status     string         `json:"status"`
	DurationMS float64        `json:"duration_ms"`
	Error      string         `json:"error,omitempty"`
	Counts     results.Counts `json:"counts"`
	// Steps are the steps outside repeat iterations, as the JSON report
	// has them, up to StepLimit; StepsLeftOut counts those left out.
	Steps          []results.Step `json:"steps"`
	StepLimit      int            `json:"step_limit"`
	StepBytesLimit int            `json:"step_bytes_limit"`
	StepsLeftOut   int            `json:"steps_left_out,omitempty"`
	LogResources   []string       `json:"log_resources"`
	ReportResource string         `json:"report_resource"`
	// Pictures are the resources of the pictures camera steps took; the
	// tool result also carries them as image content.
	Pictures []string `json:"pictures,omitempty"`
	// Measurements are what the measure steps measured, iterations
	// included, up to maxResultSteps; MeasurementsLeftOut counts the
	// rest, which the report resource lists.
	Measurements        []results.MeasureRecord `json:"measurements,omitempty"`
	MeasurementsLeftOut int                     `json:"measurements_left_out,omitempty"`
	// Result is the text report, also the tool result's text: a line per
	// listed step (index, status, kind, name, duration, message), the
	// count of steps left out, and a summary line ("passed 12/12 in
	// 1.234s", or "FAILED: 11/12 passed, 1 failed in 1.234s"), made from
	// the fields above. The STM32 debug server's serial_sequence returns
	// such a report as result; agents written for it read it there.
	Result string `json:"result"`
	// Flaky says the sequence passed only after a retry of it or of a
	// group in it; Attempts are its own attempts, with retries.
	Flaky    bool              `json:"flaky,omitempty"`
	Attempts []results.Attempt `json:"attempts,omitempty"`
	// Recovery is the climb of the server's bench's recovery ladder
	// that ran before the sequence (its health check failed, or the call
	// before ended in a bench error); nil when none did.
	Recovery     *results.Recovery `json:"recovery,omitempty"`
	picturePaths []string
}

func (r *sequenceResult) pictures() (paths, uris []string) { return r.picturePaths, r.Pictures }

func ms(d time.Duration) float64 {
	return float64(d.Round(time.Microsecond)) / float64(time.Millisecond)
}

// resultSteps collects, as a run goes, the counts and the steps its result
// lists: a results.Summarizer fed the runner's events (the same rule the
// reports apply to the event file, without reading it back), keeping the
// first maxResultSteps/2 steps, a ring of the last maxResultSteps/2, and
// the steps between that did not pass, up to results.DefaultMaxFailures.
type resultSteps struct {
	*results.Summarizer
	head, mid []results.Step
	// tail is a ring of the last steps; next is where the next goes.
	tail   []results.Step
	next   int
	total  int
	counts results.Counts
	meas   resultMeasures
}

func newResultSteps() *resultSteps {
	r := &resultSteps{}
	half := maxResultSteps / 2
	r.Summarizer = &results.Summarizer{
		OnEvery: func(_ int, st *results.Step) { r.meas.add(st) },
		OnStep: func(_ int, st *results.Step) {
			r.total++
			if len(r.head) < half {
				r.head = append(r.head, *st)
				return
			}
			if len(r.tail) < half {
				r.tail = append(r.tail, *st)
				return
			}
			old := r.tail[r.next]
			if old.Status != runner.Passed && old.Status != runner.Skipped && len(r.mid) < results.DefaultMaxFailures {
				r.mid = append(r.mid, old)
			}
			r.tail[r.next] = *st
			r.next = (r.next + 1) % half
		},
		OnEnd: func(_ int, _ *results.Sequence, c results.Counts) { r.counts = c },
	}
	return r
}

// fill sets out's counts and steps, within maxResultSteps and
// maxResultBytes.
func (r *resultSteps) fill(out *sequenceResult) {
	r.Close()
	listed := make([]results.Step, 0, len(r.head)+len(r.mid)+len(r.tail))
	listed = append(append(append(append(listed, r.head...), r.mid...), r.tail[r.next:]...), r.tail[:r.next]...)
	out.Counts = r.counts
	out.Steps = withinBytes(listed, maxResultBytes)
	out.StepLimit, out.StepBytesLimit = maxResultSteps, maxResultBytes
	out.StepsLeftOut = r.total - len(out.Steps)
	out.Measurements, out.MeasurementsLeftOut = r.meas.list, r.meas.leftOut
}

// withinBytes keeps of list what fits in limit bytes of JSON: the steps
// that did not pass first, then the others in order; the order of steps is
// kept.
func withinBytes(list []results.Step, limit int) []results.Step {
	// Most lists are far below the limit: a bound of their size, without
	// writing them, says so.
	bound := 0
	for i := range list {
		bound += sizeBound(&list[i])
		if bound > limit {
			break
		}
	}
	if bound <= limit {
		return list
	}
	size := make([]int, len(list))
	total := 0
	for i := range list {
		b, _ := json.Marshal(&list[i])
		size[i] = len(b) + 1
		total += size[i]
	}
	if total <= limit {
		return list
	}
	keep := make([]bool, len(list))
	used := 0
	for _, problems := range []bool{true, false} {
		for i := range list {
			problem := list[i].Status != runner.Passed && list[i].Status != runner.Skipped
			if problem == problems && used+size[i] <= limit {
				keep[i] = true
				used += size[i]
			}
		}
	}
	out := []results.Step{}
	for i := range list {
		if keep[i] {
			out = append(out, list[i])
		}
	}
	return out
}

// sizeBound is at least the length of st's JSON: its fixed part (field
// names, numbers, statuses) is below 512 bytes, JSON writes a byte of a
// string as at most 6 (\u00XX), and a number as at most 32. A step with a
// repeat summary, or saved values or data other than text, numbers and
// booleans, is measured by writing it.
func sizeBound(st *results.Step) int {
	n := len(st.Path) + len(st.Kind) + len(st.Name) + len(st.Group) + len(st.Message) + len(st.Expected) + len(st.Received) + len(st.File)
	for _, a := range st.Attachments {
		n += len(a) + 1
	}
	extra, ok := 0, st.Repeat == nil
	for _, m := range []map[string]any{st.Saved, st.Data} {
		for k, v := range m {
			if !ok {
				break
			}
			n += len(k) + 2
			switch x := v.(type) {
			case string:
				n += len(x)
			case json.Number:
				n += len(x)
			case bool, nil, int, int64, uint64, float64, uint32, int32, uint, float32:
				extra += 32
			default:
				ok = false
			}
		}
	}
	if !ok {
		b, _ := json.Marshal(st)
		return len(b) + 1
	}
	return 512 + 6*n + extra
}

func formatRun(out *sequenceResult, res *runner.SequenceResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "run %s: %s\n", out.RunID, out.Name)
	for _, st := range out.Steps {
		idx := strconv.Itoa(st.Index)
		if st.Path != idx {
			idx += " (" + st.Path + ")"
		}
		if st.Branch != "" {
			idx = "[" + st.Branch + "] " + idx
		}
		fmt.Fprintf(&b, "%-4s %-11s %-9s %s  %s", idx, st.Status, st.Kind, st.Name, fmtDur(st.DurationMS.D()))
		if st.Message != "" {
			fmt.Fprintf(&b, "  %s", st.Message)
		}
		b.WriteByte('\n')
		if r := st.Repeat; r != nil && r.Iterations > 0 {
			fmt.Fprintf(&b, "     %d iterations: %d passed, %d failed, %d errors; min %s, median %s, p99 %s, max %s\n",
				r.Iterations, r.Passed, r.Failed, r.Errored, fmtDur(r.MinMS.D()), fmtDur(r.MedianMS.D()), fmtDur(r.P99MS.D()), fmtDur(r.MaxMS.D()))
			for i := range r.Measurements {
				fmt.Fprintf(&b, "     %s\n", r.Measurements[i].Text())
			}
			for _, it := range r.Failures {
				if len(it.Detail) > 0 {
					d := it.Detail[0]
					fmt.Fprintf(&b, "     iteration %d: %s %s %s  %s\n", it.Index, d.Path, d.Status, d.Kind, d.Message)
				}
			}
			if r.MoreFailures > 0 {
				fmt.Fprintf(&b, "     … %d more failing iterations (see the report)\n", r.MoreFailures)
			}
		}
		if st.Status == runner.Failed || st.Status == runner.Errored {
			if st.Expected != "" {
				fmt.Fprintf(&b, "     expected: %s\n", st.Expected)
			}
			if st.Received != "" {
				fmt.Fprintf(&b, "     received: %s\n", clipText(st.Received, 400))
			}
		}
	}
	if out.StepsLeftOut > 0 {
		fmt.Fprintf(&b, "%d steps left out past the result limit (%d steps, %d bytes): the report resource lists them all\n", out.StepsLeftOut, out.StepLimit, out.StepBytesLimit)
	}
	c := out.Counts
	total := fmtDur(res.Duration)
	if out.Passed {
		fmt.Fprintf(&b, "passed %d/%d in %s", c.Passed, c.Total-c.Retried, total)
		if out.Flaky {
			fmt.Fprintf(&b, " (flaky: passed after a retry; %d executions retried)", c.Retried)
		}
	} else {
		fmt.Fprintf(&b, "%s: %d/%d passed", strings.ToUpper(out.Status), c.Passed, c.Total-c.Retried)
		if c.Retried > 0 {
			fmt.Fprintf(&b, ", %d retried", c.Retried)
		}
		for _, x := range []struct {
			n    int
			what string
		}{{c.Failed, "failed"}, {c.Errored, "errors"}, {c.Interrupted, "interrupted"}, {c.Skipped, "skipped"}} {
			if x.n > 0 {
				fmt.Fprintf(&b, ", %d %s", x.n, x.what)
			}
		}
		fmt.Fprintf(&b, " in %s", total)
		if out.Error != "" {
			fmt.Fprintf(&b, " (%s)", out.Error)
		}
	}
	b.WriteString("\nreport: " + out.ReportResource)
	if len(out.LogResources) > 0 {
		b.WriteString("\nlogs: " + strings.Join(out.LogResources, " "))
	}
	return b.String()
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "…" + s[len(s)-n:]
}

func fmtDur(d time.Duration) string {
	switch {
	case d < time.Millisecond:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	case d < time.Second:
		return strconv.FormatFloat(float64(d)/float64(time.Millisecond), 'f', 1, 64) + "ms"
	}
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64) + "s"
}

// writeReport writes the JSON report of a run from its event file, into
// the run's folder (the folder of path).
func writeReport(path, events string) error {
	fs, err := files.Under(filepath.Dir(path))
	if err != nil {
		return err
	}
	f, err := fs.Create(path)
	if err != nil {
		return err
	}
	if err := report.WriteJSON(f, events, results.Options{}); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

package report

import (
	"bytes"
	"encoding/xml"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// retriedRun is one sequence's events as the runner sends them with
// retries: each attempt's steps, then its record.
type retriedRun struct {
	seq    runner.SequenceResult
	events []runner.Event
}

func (r *retriedRun) step(st runner.StepResult) {
	r.seq.Steps = append(r.seq.Steps, st)
	r.events = append(r.events, runner.Event{Type: runner.StepFinished, Step: &st, Time: base.Add(st.Started + st.Duration)})
}

func (r *retriedRun) attempt(a runner.AttemptResult) {
	r.events = append(r.events, runner.Event{Type: runner.AttemptFinished, Attempt: &a, Time: base})
	if a.Scope == "" {
		r.seq.Attempts = append(r.seq.Attempts, a)
	}
}

// retriedEventFile writes the event file of runs.
func retriedEventFile(t *testing.T, runs ...*retriedRun) string {
	t.Helper()
	s, err := results.Create(filepath.Join(t.TempDir(), results.EventFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range runs {
		r.seq.StartedAt = base
		s.Event(runner.Event{Type: runner.SequenceStarted, Sequence: r.seq.Name, File: r.seq.File, Time: base})
		for _, e := range r.events {
			s.Event(e)
		}
		res := r.seq
		s.Event(runner.Event{Type: runner.SequenceFinished, Result: &res, Time: base.Add(res.Duration)})
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return s.Path()
}

func failedAt(path, name string, attempt int, msg string) runner.StepResult {
	return runner.StepResult{Path: path, Kind: "send", Name: name, Status: runner.Failed, Message: msg, Attempt: attempt,
		Duration: time.Millisecond}
}

func passedAt(path, name string, attempt int) runner.StepResult {
	return runner.StepResult{Path: path, Kind: "send", Name: name, Status: runner.Passed, Attempt: attempt, Duration: time.Millisecond}
}

// flakyGroupRun is a sequence whose group adc failed, then errored, then
// passed on its third attempt.
func flakyGroupRun() *retriedRun {
	r := &retriedRun{seq: runner.SequenceResult{Name: "flaky", File: "seq/flaky.yaml", Status: runner.Passed, Flaky: true,
		Duration: time.Second}}
	r.step(passedAt("0", "version", 0))
	r.step(failedAt("1.0", "adc reads", 1, "no OK adc"))
	r.attempt(runner.AttemptResult{Scope: "1", Name: "adc", Attempt: 1, Of: 3, Status: runner.Failed, Retried: true,
		Message: "no OK adc", Output: "FAIL adc (call 1)\n"})
	r.step(passedAt("1.before_retry.0", "reboot", 2))
	st := failedAt("1.0", "adc reads", 2, "write: input/output error")
	st.Status = runner.Errored
	r.step(st)
	r.attempt(runner.AttemptResult{Scope: "1", Name: "adc", Attempt: 2, Of: 3, Status: runner.Errored, Retried: true,
		Message: "write: input/output error", Output: "boot: ok\n"})
	r.step(passedAt("1.before_retry.0", "reboot", 3))
	r.step(passedAt("1.0", "adc reads", 3))
	r.attempt(runner.AttemptResult{Scope: "1", Name: "adc", Attempt: 3, Of: 3, Status: runner.Passed})
	// The group's own result lists its attempts, as the runner's does.
	g := runner.StepResult{Path: "1", Kind: "group", Name: "adc", Status: runner.Passed, Flaky: true}
	for _, e := range r.events {
		if e.Attempt != nil && e.Attempt.Scope == "1" {
			g.Attempts = append(g.Attempts, *e.Attempt)
		}
	}
	r.step(g)
	return r
}

// failingSeqRun is a sequence with retries: 1 that failed both attempts.
func failingSeqRun() *retriedRun {
	r := &retriedRun{seq: runner.SequenceResult{Name: "broken", File: "seq/broken.yaml", Status: runner.Failed, Duration: time.Second}}
	r.step(failedAt("0", "led on", 1, "no LED on <&>"))
	r.attempt(runner.AttemptResult{Name: "broken", Attempt: 1, Of: 2, Status: runner.Failed, Retried: true,
		Message: "no LED on <&>", Output: "LED off\x01\n"})
	r.step(failedAt("0", "led on", 2, "no LED on again"))
	r.attempt(runner.AttemptResult{Name: "broken", Attempt: 2, Of: 2, Status: runner.Failed, Message: "no LED on again"})
	return r
}

type rerunXML struct {
	XMLName   xml.Name
	Message   string `xml:"message,attr"`
	Type      string `xml:"type,attr"`
	SystemOut string `xml:"system-out"`
}

type retriedCaseXML struct {
	Name    string     `xml:"name,attr"`
	Failure *struct{}  `xml:"failure"`
	Error   *struct{}  `xml:"error"`
	Reruns  []rerunXML `xml:",any"`
}

type retriedSuitesXML struct {
	Suites []struct {
		Name     string           `xml:"name,attr"`
		Failures int              `xml:"failures,attr"`
		Errors   int              `xml:"errors,attr"`
		Cases    []retriedCaseXML `xml:"testcase"`
	} `xml:"testsuite"`
}

func rerunSummary(list []rerunXML) string {
	var s []string
	for _, r := range list {
		if r.XMLName.Local == "system-out" || r.XMLName.Local == "system-err" {
			continue
		}
		s = append(s, r.XMLName.Local+"/"+r.Type+"/"+r.Message)
	}
	return strings.Join(s, " | ")
}

// TestJUnitRetries checks that a test case that passed after failed
// attempts passes with one flakyFailure or flakyError per failed
// attempt, and one that never passed fails with a rerunFailure per
// retried attempt, each with the attempt's output.
func TestJUnitRetries(t *testing.T) {
	out := junitOf(t, retriedEventFile(t, flakyGroupRun(), failingSeqRun()))
	var doc retriedSuitesXML
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatalf("report does not parse: %v\n%s", err, out)
	}
	if len(doc.Suites) != 2 {
		t.Fatalf("got %d suites, want 2:\n%s", len(doc.Suites), out)
	}
	flaky, broken := doc.Suites[0], doc.Suites[1]
	if flaky.Failures != 0 || flaky.Errors != 0 || len(flaky.Cases) != 2 {
		t.Fatalf("flaky suite: %d failures, %d errors, %d cases; want 0, 0, 2:\n%s", flaky.Failures, flaky.Errors, len(flaky.Cases), out)
	}
	adc := flaky.Cases[1]
	if adc.Failure != nil || adc.Error != nil {
		t.Errorf("the flaky case %q does not pass:\n%s", adc.Name, out)
	}
	want := "flakyFailure/failed/attempt 1 of 3: no OK adc | flakyError/error/attempt 2 of 3: write: input/output error"
	if got := rerunSummary(adc.Reruns); got != want {
		t.Errorf("flaky case elements:\n got %s\nwant %s", got, want)
	}
	if len(adc.Reruns) > 0 && !strings.Contains(adc.Reruns[0].SystemOut, "FAIL adc (call 1)") {
		t.Errorf("flakyFailure's system-out = %q, want the attempt's output", adc.Reruns[0].SystemOut)
	}
	if rerunSummary(flaky.Cases[0].Reruns) != "" {
		t.Errorf("a case outside the retried group has %s", rerunSummary(flaky.Cases[0].Reruns))
	}

	if broken.Failures != 1 || len(broken.Cases) != 1 || broken.Cases[0].Failure == nil {
		t.Fatalf("broken suite: want one failing case:\n%s", out)
	}
	want = "rerunFailure/failed/attempt 1 of 2: no LED on <&>"
	if got := rerunSummary(broken.Cases[0].Reruns); got != want {
		t.Errorf("failing case elements:\n got %s\nwant %s", got, want)
	}

	out = junitOf(t, retriedEventFile(t, flakySeqRun()))
	doc = retriedSuitesXML{}
	if err := xml.Unmarshal(out, &doc); err != nil {
		t.Fatal(err)
	}
	again := doc.Suites[0].Cases[0]
	want = "flakyFailure/failed/attempt 1 of 2: no LED on"
	if got := rerunSummary(again.Reruns); again.Failure != nil || got != want {
		t.Errorf("a sequence that passed on its retry: failure %v, elements %s; want a pass with %s", again.Failure != nil, got, want)
	}
}

// TestJUnitRetriesSchema checks the reports of runs with retries against
// the schema with xmllint.
func TestJUnitRetriesSchema(t *testing.T) {
	xmllint := testenv.NeedTool(t, "xmllint", "apt-get install libxml2-utils")
	for name, runs := range map[string][]*retriedRun{
		"flaky group":        {flakyGroupRun()},
		"retried, no pass":   {failingSeqRun()},
		"flaky and rerun":    {flakyGroupRun(), failingSeqRun()},
		"retried, then pass": {flakySeqRun()},
	} {
		t.Run(name, func(t *testing.T) {
			report := junitOf(t, retriedEventFile(t, runs...))
			path := filepath.Join(t.TempDir(), "junit.xml")
			if err := os.WriteFile(path, report, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(xmllint, "--noout", "--schema", junitSchema, path).CombinedOutput()
			if err != nil {
				t.Errorf("xmllint refuses the report: %v\n%s\nreport:\n%s", err, out, report)
			}
		})
	}
}

// flakySeqRun is a sequence with retries: 1 that failed, then passed.
func flakySeqRun() *retriedRun {
	r := &retriedRun{seq: runner.SequenceResult{Name: "again", File: "seq/again.yaml", Status: runner.Passed, Flaky: true, Duration: time.Second}}
	r.step(failedAt("0", "led on", 1, "no LED on"))
	r.attempt(runner.AttemptResult{Name: "again", Attempt: 1, Of: 2, Status: runner.Failed, Retried: true, Message: "no LED on"})
	r.step(passedAt("0", "led on", 2))
	r.attempt(runner.AttemptResult{Name: "again", Attempt: 2, Of: 2, Status: runner.Passed})
	return r
}

func junitOf(t *testing.T, events string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := WriteJUnit(&b, events, JUnitOptions{Hostname: "bench-1", Now: func() time.Time { return base }}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

package report

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/runner"
)

func startedAt(st runner.StepResult, at time.Duration) runner.StepResult {
	st.Started = at
	return st
}

// timedFlakyGroupRun is a sequence whose top-level group adc failed its
// first attempt and passed its second, after a reboot.
func timedFlakyGroupRun() *retriedRun {
	ms := time.Millisecond
	r := &retriedRun{seq: runner.SequenceResult{Name: "flaky", File: "seq/flaky.yaml", Status: runner.Passed, Flaky: true, Duration: time.Second}}
	r.step(passedAt("0", "version", 0))
	r.step(startedAt(failedAt("1.0", "adc reads", 1, "no OK adc"), 100*ms))
	a1 := runner.AttemptResult{Scope: "1", Name: "adc", Attempt: 1, Of: 2, Status: runner.Failed, Retried: true,
		Message: "no OK adc", Output: "FAIL adc (call 1)\n", Started: 100 * ms, Duration: 10 * ms}
	r.attempt(a1)
	r.step(startedAt(passedAt("1.before_retry.0", "reboot", 2), 200*ms))
	r.step(startedAt(passedAt("1.0", "adc reads", 2), 300*ms))
	a2 := runner.AttemptResult{Scope: "1", Name: "adc", Attempt: 2, Of: 2, Status: runner.Passed, Started: 200 * ms, Duration: 110 * ms}
	r.attempt(a2)
	r.step(runner.StepResult{Path: "1", Kind: "group", Name: "adc", Status: runner.Passed, Flaky: true, Started: 100 * ms, Duration: 210 * ms,
		Attempts: []runner.AttemptResult{a1, a2}})
	return r
}

// timedFlakySeqRun is a sequence with retries: 1 whose step failed, then
// passed on the sequence's second attempt.
func timedFlakySeqRun() *retriedRun {
	ms := time.Millisecond
	r := &retriedRun{seq: runner.SequenceResult{Name: "again", File: "seq/again.yaml", Status: runner.Passed, Flaky: true, Duration: time.Second}}
	r.step(failedAt("0", "led on", 1, "no LED on"))
	r.attempt(runner.AttemptResult{Name: "again", Attempt: 1, Of: 2, Status: runner.Failed, Retried: true, Message: "no LED on", Duration: 10 * ms})
	r.step(startedAt(passedAt("0", "led on", 2), 500*ms))
	r.attempt(runner.AttemptResult{Name: "again", Attempt: 2, Of: 2, Status: runner.Passed, Started: 500 * ms, Duration: 10 * ms})
	return r
}

// TestAllureRetries checks that each earlier attempt of a retried test
// case is a result of its own sharing the case's historyId, with its
// status, message, console excerpt and steps, and that the last attempt
// is the latest result, marked flaky.
func TestAllureRetries(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "allure-results")
	events := retriedEventFile(t, timedFlakyGroupRun(), timedFlakySeqRun())
	if err := WriteAllure(context.Background(), out, events, AllureOptions{Files: files.Anywhere()}); err != nil {
		t.Fatal(err)
	}
	res, _ := readAllure(t, out)
	names := make([]string, 0, len(res))
	for n := range res {
		names = append(names, n)
	}
	sort.Strings(names)
	var all bytes.Buffer
	byHistory := map[string][]allureResult{}
	for _, n := range names {
		all.WriteString("== " + n + "\n")
		all.Write(res[n])
		var r allureResult
		if err := json.Unmarshal(res[n], &r); err != nil {
			t.Fatal(err)
		}
		byHistory[r.Name+" "+r.HistoryID] = append(byHistory[r.Name+" "+r.HistoryID], r)
	}
	golden(t, "allure_retry.golden.txt", all.Bytes())

	stepNames := func(r allureResult) string {
		var s []string
		for _, st := range r.Steps {
			s = append(s, st.Name+" "+st.Status)
		}
		return strings.Join(s, ", ")
	}
	type attempt struct{ status, message, trace, steps string }
	tests := []struct {
		name string
		// want are the case's results, earliest first.
		want []attempt
	}{
		{"01 group adc", []attempt{
			{"failed", "attempt 1 of 2: no OK adc", "FAIL adc (call 1)", "attempt 1: 01.0 send adc reads failed"},
			{"passed", "flaky: passed on attempt 2 of 2", "", "attempt 2: 01.before_retry.0 send reboot passed, attempt 2: 01.0 send adc reads passed"},
		}},
		{"00 send led on", []attempt{
			{"failed", "attempt 1 of 2: no LED on", "", ""},
			{"passed", "flaky: passed on attempt 2 of 2", "", ""},
		}},
		{"00 send version", []attempt{{"passed", "", "", ""}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []allureResult
			for k, list := range byHistory {
				if strings.HasPrefix(k, tt.name+" ") {
					if got != nil {
						t.Fatalf("the attempts of %s have more than one historyId", tt.name)
					}
					got = list
				}
			}
			sort.SliceStable(got, func(i, j int) bool { return got[i].Start < got[j].Start })
			if len(got) != len(tt.want) {
				t.Fatalf("%d results share the history of %s, want %d", len(got), tt.name, len(tt.want))
			}
			for i, w := range tt.want {
				g := got[i]
				var d allureDetails
				if g.StatusDetails != nil {
					d = *g.StatusDetails
				}
				if g.Status != w.status || d.Message != w.message || !strings.Contains(d.Trace, w.trace) || stepNames(g) != w.steps {
					t.Errorf("result %d: status %s, message %q, trace %q, steps %q; want %s, %q, %q, %q",
						i+1, g.Status, d.Message, d.Trace, stepNames(g), w.status, w.message, w.trace, w.steps)
				}
				last := i == len(tt.want)-1
				if flaky := d.Flaky; flaky != (last && len(tt.want) > 1) {
					t.Errorf("result %d: flaky %t, want it on the last attempt of a retried case only", i+1, flaky)
				}
				if i > 0 && g.Start <= got[i-1].Start {
					t.Errorf("result %d starts at %d, not after the attempt before it (%d): Allure would not take the last for the latest", i+1, g.Start, got[i-1].Start)
				}
			}
		})
	}
}

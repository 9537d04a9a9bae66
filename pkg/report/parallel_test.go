package report

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// parallelFixture is a run with a parallel: step whose branches' steps
// finished interleaved, as the runner reports them: sender meets receiver
// at a barrier, then fails, which cancels receiver at its next step; the
// finally step of sender runs. A second sequence has a parallel step
// inside a group.
func parallelFixture() []runner.SequenceResult {
	ms := time.Millisecond
	us := time.Microsecond
	barrier := func(at time.Duration) map[string]any {
		return map[string]any{"barrier": "ready", "crossing": 1, "waited_us": 120, "late_us": 3, "released_ms": float64(at) / float64(ms)}
	}
	cancelled := "branch sender failed at step 1.sender.1"
	radio := runner.SequenceResult{
		Name: "radio", File: "seq/radio.yaml", Status: runner.Failed, StartedAt: base, Duration: 120 * ms,
		Steps: []runner.StepResult{
			{Path: "0", Kind: "send", Name: "hello", Status: runner.Passed, Started: 0, Duration: 1 * ms},
			{Path: "1.receiver.0", Kind: "barrier", Name: "ready", Branch: "receiver", Status: runner.Passed,
				Started: 2 * ms, Duration: 3 * ms, Message: "crossing 1, waited 120µs", Data: barrier(5 * ms)},
			{Path: "1.sender.0", Kind: "barrier", Name: "ready", Branch: "sender", Status: runner.Passed,
				Started: 4 * ms, Duration: 1 * ms, Message: "crossing 1, waited 1ms", Data: barrier(5 * ms)},
			{Path: "1.receiver.1", Kind: "expect", Name: "rx hello", Branch: "receiver", Status: runner.Passed,
				Started: 5 * ms, Duration: 800 * us},
			{Path: "1.sender.1", Kind: "expect", Name: "ack", Branch: "sender", Status: runner.Failed, File: "seq/radio.yaml", Line: 12, Column: 11,
				Started: 5 * ms, Duration: 100 * ms, Message: `timed out after 100ms waiting for "ack"`, Expected: `"ack"`, Received: "tx hello\r\nnak\r\n"},
			{Path: "1.receiver.2", Kind: "send", Name: "more", Branch: "receiver", Status: runner.Skipped, Started: 105 * ms, Message: "cancelled: " + cancelled},
			{Path: "1.sender.finally.0", Kind: "send", Name: "radio off", Branch: "sender", Status: runner.Passed, Started: 105 * ms, Duration: 1 * ms},
			{Path: "1.receiver", Kind: "branch", Name: "receiver", Branch: "receiver", Status: runner.Passed,
				Started: 2 * ms, Duration: 103 * ms, Message: "cancelled: " + cancelled},
			{Path: "1.sender", Kind: "branch", Name: "sender", Branch: "sender", Status: runner.Failed, Started: 2 * ms, Duration: 105 * ms},
			{Path: "1", Kind: "parallel", Name: "parallel sender, receiver", Status: runner.Failed, Started: 2 * ms, Duration: 105 * ms,
				Message: cancelled + "; the other branches were cancelled", Data: map[string]any{"branches": []any{"sender", "receiver"}}},
			{Path: "2", Kind: "send", Name: "bye", Status: runner.Skipped, Started: 108 * ms, Message: "not run"},
		},
	}
	nested := runner.SequenceResult{
		Name: "nested", File: "seq/nested.yaml", Status: runner.Passed, StartedAt: base.Add(time.Second), Duration: 20 * ms,
		Steps: []runner.StepResult{
			{Path: "0.0.b.0", Kind: "send", Name: "echo b", Group: "pair", Branch: "b", Status: runner.Passed, Started: 1 * ms, Duration: 2 * ms},
			{Path: "0.0.a.0", Kind: "send", Name: "echo a", Group: "pair", Branch: "a", Status: runner.Passed, Started: 1 * ms, Duration: 3 * ms},
			{Path: "0.0.b.1.0", Kind: "send", Name: "echo b2", Group: "pair / inner", Branch: "b", Status: runner.Passed, Started: 3 * ms, Duration: 1 * ms},
			{Path: "0.0.b.1", Kind: "group", Name: "inner", Group: "pair / inner", Branch: "b", Status: runner.Passed, Started: 3 * ms, Duration: 1 * ms},
			{Path: "0.0.b", Kind: "branch", Name: "b", Group: "pair", Branch: "b", Status: runner.Passed, Started: 1 * ms, Duration: 2 * ms},
			{Path: "0.0.a", Kind: "branch", Name: "a", Group: "pair", Branch: "a", Status: runner.Passed, Started: 1 * ms, Duration: 3 * ms},
			{Path: "0.0", Kind: "parallel", Name: "handshake", Group: "pair", Status: runner.Passed, Started: 1 * ms, Duration: 3 * ms,
				Data: map[string]any{"branches": []any{"a", "b"}}},
			{Path: "0", Kind: "group", Name: "pair", Status: runner.Passed, Started: 1 * ms, Duration: 3 * ms},
		},
	}
	seqs := []runner.SequenceResult{radio, nested}
	for i := range seqs {
		for j := range seqs[i].Steps {
			seqs[i].Steps[j].Index = j
		}
	}
	return seqs
}

var senderLine = regexp.MustCompile(`s\] step 1\.sender`)

// The console prefixes the lines of each branch with its name.
func TestConsoleParallel(t *testing.T) {
	var out bytes.Buffer
	c := NewConsole(&out, ConsoleOptions{Now: fakeClock(base, 4*time.Second)})
	seqs := parallelFixture()
	for _, seq := range seqs {
		for _, e := range events(seq) {
			c.Event(e)
		}
	}
	golden(t, "console_parallel.golden", out.Bytes())
	for _, l := range strings.Split(out.String(), "\n") {
		if senderLine.MatchString(l) && !strings.HasPrefix(strings.TrimSpace(l), "[sender] ") {
			t.Errorf("a line of branch sender without its name first: %q", l)
		}
	}
}

// JSON keeps every branch's steps, each with its branch.
func TestJSONParallel(t *testing.T) {
	var out bytes.Buffer
	if err := WriteJSON(&out, eventFile(t, parallelFixture()), results.Options{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "report_parallel.golden.json", out.Bytes())
	var doc struct {
		Sequences []struct {
			Steps []struct {
				Path, Branch string
			} `json:"steps"`
		} `json:"sequences"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	branches := map[string]int{}
	for _, st := range doc.Sequences[0].Steps {
		branches[st.Branch]++
	}
	if branches["sender"] != 4 || branches["receiver"] != 4 {
		t.Errorf("steps by branch: %v", branches)
	}
}

// JUnit makes a testcase of each branch of a top-level parallel step, in
// the order the branches are written; a parallel step in a group is part
// of the group's testcase.
func TestJUnitParallel(t *testing.T) {
	out := junitReport(t, parallelFixture())
	golden(t, "junit_parallel.golden.xml", out)
	suites := parseJUnit(t, out)
	var names []string
	for _, s := range suites.Suites {
		for _, tc := range s.Testcases {
			names = append(names, tc.Name)
		}
	}
	want := "00 send hello|01 parallel [sender]|01 parallel [receiver]|02 send bye|00 pair"
	if got := strings.Join(names, "|"); got != want {
		t.Errorf("testcases %s\nwant %s", got, want)
	}
	if s := suites.Suites[0]; s.Tests != 4 || s.Failures != 1 || s.Skipped != 1 {
		t.Errorf("suite counts: %d tests, %d failures, %d skipped", s.Tests, s.Failures, s.Skipped)
	}
}

// Allure nests each branch's steps, its finally steps included, under the
// branch, under the parallel step's test case.
func TestAllureParallel(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "allure-results")
	if err := WriteAllure(context.Background(), out, eventFile(t, parallelFixture()), AllureOptions{Files: files.Anywhere(), Info: htmlInfo}); err != nil {
		t.Fatal(err)
	}
	res, _ := readAllure(t, out)
	var tree []string
	var walk func(prefix string, ss []*allureStep)
	walk = func(prefix string, ss []*allureStep) {
		for _, s := range ss {
			tree = append(tree, prefix+s.Name+" "+s.Status)
			walk(prefix+"  ", s.Steps)
		}
	}
	var names []string
	for n := range res {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		var r allureResult
		if err := json.Unmarshal(res[n], &r); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(r.Name, "parallel") {
			tree = append(tree, r.Name+" "+r.Status)
			walk("  ", r.Steps)
		}
	}
	want := `01 parallel parallel sender, receiver failed
  01.sender branch sender failed
    01.sender.0 barrier ready passed
    01.sender.1 expect ack failed
    01.sender.finally.0 send radio off passed
  01.receiver branch receiver passed
    01.receiver.0 barrier ready passed
    01.receiver.1 expect rx hello passed
    01.receiver.2 send more skipped`
	if got := strings.Join(tree, "\n"); got != want {
		t.Errorf("allure steps\n%s\nwant\n%s", got, want)
	}
}

// A branch's step that runs long shows life even after a step of the
// other branch finished: each branch's running step has a timer of its
// own.
func TestConsoleParallelStillWaiting(t *testing.T) {
	var out bytes.Buffer
	tm := &timers{}
	now := base
	c := NewConsole(&out, ConsoleOptions{AfterFunc: tm.after, Now: func() time.Time { return now }})
	started := func(path, branch string) {
		c.Event(runner.Event{Type: runner.StepStarted, Time: base, Step: &runner.StepResult{Path: path, Kind: "expect", Name: "reply", Branch: branch}})
	}
	started("0.a.0", "a")
	started("0.b.0", "b")
	c.Event(runner.Event{Type: runner.StepFinished, Step: &runner.StepResult{Path: "0.b.0", Kind: "expect", Name: "reply", Branch: "b", Status: runner.Passed}})
	now = base.Add(10 * time.Second)
	tm.fire(0) // a's
	if !strings.Contains(out.String(), "[a] … step 0.a.0 expect reply: still running after 10s") {
		t.Errorf("no still-running line for branch a:\n%s", out.String())
	}
}

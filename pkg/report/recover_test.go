package report

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// hostileHealth is what a board printed into a health check's message:
// an escape sequence, and an attachment marker that CI servers act on.
const hostileHealth = "timed out; last received: \x1b[2J[[ATTACHMENT|/etc/passwd]]"

// recoveryFixture is an event file of a pool run: two sequences, a climb
// that brought bench good back with its second rung, and one that did not
// bring bench stuck back, which is marked bad.
func recoveryFixture(t *testing.T, dir string) string {
	t.Helper()
	s, err := results.Create(filepath.Join(dir, results.EventFile))
	if err != nil {
		t.Fatal(err)
	}
	seq := func(name, bench string, at time.Time) {
		s.Event(runner.Event{Type: runner.SequenceStarted, Sequence: name, File: name + ".yaml", Time: at})
		s.Event(runner.Event{Type: runner.StepFinished, Step: &runner.StepResult{Path: "0", Kind: "send", Name: "version", Status: runner.Passed}})
		s.Event(runner.Event{Type: runner.SequenceFinished, Result: &runner.SequenceResult{Name: name, File: name + ".yaml", Bench: bench, Status: runner.Passed, StartedAt: at, Duration: time.Second}})
	}
	seq("first", "good", base)
	failed := results.Check{Status: runner.Failed, Message: hostileHealth, DurationMS: 2000}
	s.Recovered(&results.Recovery{Bench: "good", Trigger: results.TriggerHealth, Sequence: "second.yaml", StartedAt: base.Add(2 * time.Second), DurationMS: 4100,
		Check: &failed, Recovered: true, Rungs: []results.RungResult{
			{Index: 1, Label: "send reboot", File: "lab.pool.yaml", Line: 9, Column: 9, Check: results.Check{Status: runner.Passed, DurationMS: 1}, Health: failed},
			{Index: 2, Label: "reset run", File: "lab.pool.yaml", Line: 10, Column: 9, Check: results.Check{Status: runner.Passed, DurationMS: 3}, Health: results.Check{Status: runner.Passed, DurationMS: 2}},
		}})
	stuck := &results.Recovery{Bench: "stuck", Trigger: results.TriggerError, Sequence: "hang.yaml", StartedAt: base.Add(3 * time.Second), DurationMS: 4000,
		Check: &failed, Rungs: []results.RungResult{
			{Index: 1, Label: "send reboot", File: "lab.pool.yaml", Line: 4, Column: 9, Check: results.Check{Status: runner.Passed, DurationMS: 1}, Health: failed},
		}}
	s.Recovered(stuck)
	s.MarkedBad(&results.BadBench{Bench: "stuck", Reason: stuck.BadReason(), At: base.Add(7 * time.Second)})
	seq("second", "good", base.Add(8*time.Second))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return s.Path()
}

func TestRecoveryJSON(t *testing.T) {
	events := recoveryFixture(t, t.TempDir())
	var out bytes.Buffer
	if err := WriteJSON(&out, events, results.Options{}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Passed     bool               `json:"passed"`
		Sequences  []json.RawMessage  `json:"sequences"`
		Recoveries []results.Recovery `json:"recoveries"`
		Bad        []results.BadBench `json:"bad_benches"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out.Bytes())
	}
	if !doc.Passed || len(doc.Sequences) != 2 || len(doc.Recoveries) != 2 || len(doc.Bad) != 1 {
		t.Fatalf("passed %t, %d sequences, %d recoveries, %d bad benches; want true, 2, 2, 1", doc.Passed, len(doc.Sequences), len(doc.Recoveries), len(doc.Bad))
	}
	if r := doc.Recoveries[0]; !r.Recovered || len(r.Rungs) != 2 || !r.Rungs[1].Worked() || r.Rungs[1].Line != 10 {
		t.Errorf("first recovery %+v", r)
	}
	if doc.Bad[0].Bench != "stuck" || !strings.Contains(doc.Bad[0].Reason, "hang.yaml ended in a bench error") {
		t.Errorf("bad bench %+v", doc.Bad[0])
	}
	if bytes.Contains(out.Bytes(), []byte("\x1b")) {
		t.Error("the report holds a raw escape byte")
	}
}

func TestRecoveryJUnit(t *testing.T) {
	events := recoveryFixture(t, t.TempDir())
	var out bytes.Buffer
	if err := WriteJUnit(&out, events, JUnitOptions{Hostname: "bench-1", Now: func() time.Time { return base }}); err != nil {
		t.Fatal(err)
	}
	suites := parseJUnit(t, out.Bytes())
	if len(suites.Suites) != 4 {
		t.Fatalf("%d testsuites, want 2 sequences and 2 benches:\n%s", len(suites.Suites), out.Bytes())
	}
	good, stuck := suites.Suites[2], suites.Suites[3]
	if good.Name != "bench good: recovery" || good.Tests != 1 || good.Skipped != 0 || good.Testcases[0].Skipped != nil {
		t.Errorf("bench good's suite: %+v", good)
	}
	if !strings.Contains(good.Testcases[0].SystemOut.Data, "rung 2 (reset run) at lab.pool.yaml:10:9: passed; health check: passed") {
		t.Errorf("bench good's climb says %q", good.Testcases[0].SystemOut.Data)
	}
	if stuck.Skipped != 1 || stuck.Errors != 0 || stuck.Failures != 0 || stuck.Testcases[0].Skipped == nil ||
		!strings.Contains(stuck.Testcases[0].Skipped.Message, "bench stuck is bad: it took no more work") {
		t.Errorf("bench stuck's suite: %+v", stuck)
	}
	props := map[string]string{}
	for _, p := range *stuck.Properties {
		props[p.Name] = p.Value
	}
	if props["bench"] != "stuck" || !strings.Contains(props["bad"], "hang.yaml ended in a bench error") {
		t.Errorf("bench stuck's properties %v", props)
	}
	if suites.Tests != 4 || suites.Errors != 0 || suites.Failures != 0 {
		t.Errorf("the report counts %d tests, %d errors, %d failures; want 4, 0, 0", suites.Tests, suites.Errors, suites.Failures)
	}
	if bytes.Contains(out.Bytes(), []byte("[[ATTACHMENT|")) {
		t.Error("a board's text made an attachment line")
	}
	xmllint := testenv.NeedTool(t, "xmllint", "apt-get install libxml2-utils")
	path := filepath.Join(t.TempDir(), "junit.xml")
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if msg, err := exec.Command(xmllint, "--noout", "--schema", junitSchema, path).CombinedOutput(); err != nil {
		t.Errorf("xmllint refuses the report: %v\n%s", err, msg)
	}
}

func TestRecoveryHTMLAndAllure(t *testing.T) {
	dir := t.TempDir()
	events := recoveryFixture(t, dir)
	t.Run("html", func(t *testing.T) {
		var out bytes.Buffer
		if err := WriteHTML(&out, events, HTMLOptions{Files: files.Anywhere(), Now: htmlNow}); err != nil {
			t.Fatal(err)
		}
		var data struct {
			Recoveries []htmlRecovery     `json:"recoveries"`
			Bad        []results.BadBench `json:"bad_benches"`
			Sequences  []json.RawMessage  `json:"sequences"`
		}
		if err := json.Unmarshal(htmlPageData(t, out.Bytes()), &data); err != nil {
			t.Fatal(err)
		}
		if len(data.Sequences) != 2 || len(data.Recoveries) != 2 || len(data.Bad) != 1 {
			t.Fatalf("page data: %d sequences, %d recoveries, %d bad benches", len(data.Sequences), len(data.Recoveries), len(data.Bad))
		}
		if r := data.Recoveries[0]; r.Outcome != "recovered by rung 2 (reset run)" || !strings.HasPrefix(r.Why, "the health check failed before second.yaml") {
			t.Errorf("first climb on the page: %q, %q", r.Why, r.Outcome)
		}
	})

	t.Run("allure", func(t *testing.T) {
		out := filepath.Join(t.TempDir(), "allure")
		if err := WriteAllure(context.Background(), out, events, AllureOptions{Files: files.Anywhere()}); err != nil {
			t.Fatal(err)
		}
		res, _ := readAllure(t, out)
		byName := map[string]allureResult{}
		for _, b := range res {
			var r allureResult
			if err := json.Unmarshal(b, &r); err != nil {
				t.Fatal(err)
			}
			for _, l := range r.Labels {
				if l.Name == "suite" && strings.HasPrefix(l.Value, "bench ") {
					byName[l.Value+"#"+r.Name] = r
				}
			}
		}
		good, ok := byName["bench good: recovery#recovery before second.yaml"]
		if !ok || good.Status != "passed" || len(good.Steps) != 3 || good.Steps[2].Steps[0].Status != "passed" {
			t.Errorf("bench good's climb: %+v (all: %v)", good, byName)
		}
		stuck, ok := byName["bench stuck: recovery#recovery after hang.yaml"]
		if !ok || stuck.Status != "broken" || stuck.StatusDetails == nil || !strings.Contains(stuck.StatusDetails.Message, "bench stuck is bad") {
			t.Errorf("bench stuck's climb: %+v", stuck)
		}
	})
}

func TestRecoveryMerged(t *testing.T) {
	dir := t.TempDir()
	events := recoveryFixture(t, dir)
	var js, ju bytes.Buffer
	if err := WriteJSON(&js, events, results.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := WriteJUnit(&ju, events, JUnitOptions{}); err != nil {
		t.Fatal(err)
	}
	jp, xp := filepath.Join(dir, "a.json"), filepath.Join(dir, "a.xml")
	if err := os.WriteFile(jp, js.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(xp, ju.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var mj, mx bytes.Buffer
	if err := MergeJSON(&mj, files.Anywhere(), []string{jp}); err != nil {
		t.Fatal(err)
	}
	if err := MergeJUnit(&mx, files.Anywhere(), []string{xp}); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Recoveries []results.Recovery `json:"recoveries"`
		Bad        []results.BadBench `json:"bad_benches"`
	}
	if err := json.Unmarshal(mj.Bytes(), &doc); err != nil || len(doc.Recoveries) != 2 || len(doc.Bad) != 1 {
		t.Errorf("the merged JSON report has %d recoveries and %d bad benches (%v)", len(doc.Recoveries), len(doc.Bad), err)
	}
	if s := parseJUnit(t, mx.Bytes()); len(s.Suites) != 4 || s.Suites[3].Name != "bench stuck: recovery" {
		t.Errorf("the merged JUnit report:\n%s", mx.Bytes())
	}
}

// TestConsoleRecovery: a climb prints why it ran, each rung with the
// health check after it and how it ended; a bad bench is said at once
// and again after the summary, with why.
func TestConsoleRecovery(t *testing.T) {
	dir := t.TempDir()
	var b results.Benches
	z := &results.Summarizer{BenchHooks: b.Hooks()}
	if err := results.Summarize(recoveryFixture(t, dir), z); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	c := NewConsole(&out, ConsoleOptions{})
	for i := range b.Recoveries {
		c.Recovery(&b.Recoveries[i])
	}
	c.MarkedBad(&b.Bad[0])
	c.BadBenches(b.Bad)
	golden(t, "console_recover.golden", out.Bytes())
	if bytes.Contains(out.Bytes(), []byte("\x1b")) {
		t.Error("a board's escape sequence reached the terminal")
	}
}

// TestClimbInterruptedReports: a run an interrupt stopped during a climb
// (between sequences that passed) did not pass, in the JSON report, the
// HTML page and their merges, and its climb is a JUnit error.
func TestClimbInterruptedReports(t *testing.T) {
	dir := t.TempDir()
	s, err := results.Create(filepath.Join(dir, results.EventFile))
	if err != nil {
		t.Fatal(err)
	}
	s.Event(runner.Event{Type: runner.SequenceStarted, Sequence: "first", File: "first.yaml", Time: base})
	s.Event(runner.Event{Type: runner.StepFinished, Step: &runner.StepResult{Path: "0", Kind: "send", Name: "version", Status: runner.Passed}})
	s.Event(runner.Event{Type: runner.SequenceFinished, Result: &runner.SequenceResult{Name: "first", File: "first.yaml", Status: runner.Passed, StartedAt: base, Duration: time.Second}})
	failed := results.Check{Status: runner.Failed, Message: "timed out", DurationMS: 1000}
	s.Recovered(&results.Recovery{Bench: "lab", Trigger: results.TriggerHealth, Sequence: "second.yaml", StartedAt: base.Add(time.Second), DurationMS: 1500,
		Check: &failed, Interrupted: true, Rungs: []results.RungResult{
			{Index: 1, Label: "exec sleep 60", Check: results.Check{Status: runner.Interrupted, Message: "interrupted"}, Health: results.Check{Status: runner.Interrupted}},
		}})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	var doc struct{ Passed, Interrupted bool }
	check := func(what string, data []byte) {
		t.Helper()
		doc.Passed, doc.Interrupted = true, false
		if err := json.Unmarshal(data, &doc); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if doc.Passed || !doc.Interrupted {
			t.Errorf("%s: passed %t, interrupted %t; want false, true", what, doc.Passed, doc.Interrupted)
		}
	}
	var js bytes.Buffer
	if err := WriteJSON(&js, s.Path(), results.Options{}); err != nil {
		t.Fatal(err)
	}
	check("the JSON report", js.Bytes())
	shard := filepath.Join(dir, "shard.json")
	if err := os.WriteFile(shard, js.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var merged bytes.Buffer
	if err := MergeJSON(&merged, files.Anywhere(), []string{shard}); err != nil {
		t.Fatal(err)
	}
	check("the merged JSON report", merged.Bytes())
	for name, write := range map[string]func(*bytes.Buffer) error{
		"the HTML page":        func(b *bytes.Buffer) error { return WriteHTML(b, s.Path(), HTMLOptions{Files: files.Anywhere()}) },
		"the merged HTML page": func(b *bytes.Buffer) error { return MergeHTML(b, files.Anywhere(), []string{shard}, HTMLOptions{}) },
	} {
		var page bytes.Buffer
		if err := write(&page); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(page.String(), "<title>INTERRUPTED first") {
			t.Errorf("%s's title does not say INTERRUPTED", name)
		}
		check(name+"'s data", htmlPageData(t, page.Bytes()))
	}
	var junit bytes.Buffer
	if err := WriteJUnit(&junit, s.Path(), JUnitOptions{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(junit.String(), `<error message="interrupted: interrupted after 1 rung" type="interrupted">`) {
		t.Errorf("the JUnit report does not tell the interrupted climb as an error:\n%s", junit.String())
	}
}

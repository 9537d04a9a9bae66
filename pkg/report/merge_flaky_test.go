package report

import (
	"bytes"
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

// measured is a measure step at path that ran at ms into its sequence.
func measured(path, name string, attempt int, ms int, m runner.Measurement) runner.StepResult {
	st := measureStep(0, path, name, m)
	st.Attempt, st.Started = attempt, time.Duration(ms)*time.Millisecond
	return st
}

// measuredFlakyRun is a sequence whose group adc failed its first
// attempt and passed its second, measuring adc; then it measures vbat
// once and ripple in each of two iterations of a repeat.
func measuredFlakyRun() *retriedRun {
	r := &retriedRun{seq: runner.SequenceResult{Name: "flaky", File: "seq/flaky.yaml", Status: runner.Passed, Flaky: true, Duration: time.Second}}
	r.step(passedAt("0", "version", 0))
	low := measured("1.0", "adc", 1, 11, runner.Measurement{Name: "adc", Value: 3990.0, Unit: "counts", Min: float(4000), Max: float(4100), Outcome: runner.Failed})
	low.Message = "adc = 3990 counts, outside [4000, 4100] counts"
	r.step(low)
	r.step(failedAt("1.1", "adc reads", 1, "no OK adc"))
	r.attempt(runner.AttemptResult{Scope: "1", Name: "adc", Attempt: 1, Of: 2, Status: runner.Failed, Retried: true,
		Message: "no OK adc", Output: "FAIL adc (call 1)\n", Started: 10 * time.Millisecond, Duration: 5 * time.Millisecond})
	r.step(passedAt("1.before_retry.0", "reboot", 2))
	r.step(measured("1.0", "adc", 2, 30, runner.Measurement{Name: "adc", Value: 4020.0, Unit: "counts", Min: float(4000), Max: float(4100)}))
	r.step(passedAt("1.1", "adc reads", 2))
	r.attempt(runner.AttemptResult{Scope: "1", Name: "adc", Attempt: 2, Of: 2, Status: runner.Passed,
		Started: 20 * time.Millisecond, Duration: 15 * time.Millisecond})
	g := runner.StepResult{Path: "1", Kind: "group", Name: "adc", Status: runner.Passed, Flaky: true,
		Started: 10 * time.Millisecond, Duration: 25 * time.Millisecond}
	for _, e := range r.events {
		if e.Attempt != nil {
			g.Attempts = append(g.Attempts, *e.Attempt)
		}
	}
	r.step(g)
	r.step(measured("2", "vbat", 0, 40, runner.Measurement{Name: "vbat", Value: 3.31, Unit: "V", Min: float(3), Max: float(3.6)}))
	ripple(r, "3", 50, 12.5, 13.0)
	return r
}

// ripple adds a repeat at path that measures ripple once per iteration.
func ripple(r *retriedRun, path string, ms int, values ...float64) {
	for i, v := range values {
		r.step(measured(path+"#"+string(rune('0'+i))+".0", "ripple", 0, ms+i,
			runner.Measurement{Name: "ripple", Value: v, Unit: "mV", Max: float(20)}))
	}
	r.step(runner.StepResult{Path: path, Kind: "repeat", Name: "ripple", Status: runner.Passed,
		Started: time.Duration(ms) * time.Millisecond, Duration: time.Duration(len(values)) * time.Millisecond})
}

// benchBRun is a sequence of another bench that measures vbat and
// ripple too.
func benchBRun() *retriedRun {
	r := &retriedRun{seq: runner.SequenceResult{Name: "bench b", File: "seq/bench-b.yaml", Status: runner.Passed, Duration: time.Second}}
	r.step(measured("0", "vbat", 0, 1, runner.Measurement{Name: "vbat", Value: 3.29, Unit: "V", Min: float(3), Max: float(3.6)}))
	ripple(r, "1", 2, 14.0, 15.5, 19.5)
	return r
}

// writeShardEvents writes the JSON and JUnit reports of the event file
// events as shard of a run, and returns their paths.
func writeShardEvents(t *testing.T, dir, name, events string, shard *Shard) (jsonPath, junitPath string) {
	t.Helper()
	jsonPath, junitPath = filepath.Join(dir, name+".json"), filepath.Join(dir, name+".xml")
	var js, ju bytes.Buffer
	if err := WriteShardJSON(&js, events, results.Options{}, shard); err != nil {
		t.Fatal(err)
	}
	opts := JUnitOptions{Hostname: "bench-1", Now: func() time.Time { return base }, Shard: shard}
	if err := WriteJUnit(&ju, events, opts); err != nil {
		t.Fatal(err)
	}
	for p, b := range map[string][]byte{jsonPath: js.Bytes(), junitPath: ju.Bytes()} {
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return jsonPath, junitPath
}

// flakyShards writes two shards' reports: the first holds bench b and a
// sequence that never passed, the second a flaky one with measurements.
func flakyShards(t *testing.T, dir string) (jsons, junits []string) {
	sh := func(i int) *Shard { return &Shard{Index: i, Total: 2, Sequences: 3, Plan: "p"} }
	j1, x1 := writeShardEvents(t, dir, "shard-1", retriedEventFile(t, benchBRun(), failingSeqRun()), sh(1))
	j2, x2 := writeShardEvents(t, dir, "shard-2", retriedEventFile(t, measuredFlakyRun()), sh(2))
	return []string{j2, j1}, []string{x2, x1}
}

// TestMergeFlakyAndMeasured merges two shards, one with a flaky case and
// measurements, and checks that the merged JSON and JUnit are those of
// the single run: the JSON's flaky mark, attempts and measurements, and
// the JUnit's measurement properties and flakyFailure and rerunFailure
// elements, with the merged JUnit valid against the schema.
func TestMergeFlakyAndMeasured(t *testing.T) {
	dir := t.TempDir()
	jsons, junits := flakyShards(t, dir)
	// The single run, in the order merge sorts the sequences: by file.
	single := retriedEventFile(t, benchBRun(), failingSeqRun(), measuredFlakyRun())
	var wantJSON bytes.Buffer
	if err := WriteJSON(&wantJSON, single, results.Options{}); err != nil {
		t.Fatal(err)
	}
	wantJUnit := junitOf(t, single)

	var gotJSON, gotJUnit bytes.Buffer
	if err := MergeJSON(&gotJSON, files.Anywhere(), jsons); err != nil {
		t.Fatal(err)
	}
	if err := MergeJUnit(&gotJUnit, files.Anywhere(), junits); err != nil {
		t.Fatal(err)
	}
	if d := firstDiff(gotJSON.String(), wantJSON.String()); d != "" {
		t.Errorf("merged JSON differs from the single run's: %s", d)
	}
	if d := firstDiff(gotJUnit.String(), string(wantJUnit)); d != "" {
		t.Errorf("merged JUnit differs from the single run's: %s", d)
	}
	for _, want := range []string{`"flaky": true`, `"name": "adc"`, `"name": "ripple"`, `"iteration": 1`, `"attempts": [`} {
		if !strings.Contains(gotJSON.String(), want) {
			t.Errorf("merged JSON lacks %s:\n%s", want, gotJSON.String())
		}
	}
	for _, want := range []string{
		`<property name="adc" value="4020"></property>`,
		`<property name="adc.outcome" value="passed"></property>`,
		`<property name="vbat.unit" value="V"></property>`,
		`<property name="ripple.max" value="19.5"></property>`,
		`<flakyFailure message="attempt 1 of 2: adc = 3990 counts, outside [4000, 4100] counts" type="failed">`,
		`<rerunFailure message="attempt 1 of 2: no LED on &lt;&amp;&gt;" type="failed">`,
	} {
		if !strings.Contains(gotJUnit.String(), want) {
			t.Errorf("merged JUnit lacks %s:\n%s", want, gotJUnit.String())
		}
	}

	if strings.Contains(gotJUnit.String(), `value="3990"`) {
		t.Errorf("the flaky case's properties hold the measurement of its failed attempt; want those of its last:\n%s", gotJUnit.String())
	}

	xmllint := testenv.NeedTool(t, "xmllint", "apt-get install libxml2-utils")
	path := filepath.Join(dir, "merged.xml")
	if err := os.WriteFile(path, gotJUnit.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(xmllint, "--noout", "--schema", junitSchema, path).CombinedOutput(); err != nil {
		t.Errorf("xmllint refuses the merged report: %v\n%s\nreport:\n%s", err, out, gotJUnit.String())
	}
}

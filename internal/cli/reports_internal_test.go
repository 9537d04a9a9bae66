package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// TestWriteReportsIndependently makes the JUnit report fail after the run
// (its path became a folder) and checks that the JSON report is still
// written and that the error names what was lost.
func TestWriteReportsIndependently(t *testing.T) {
	dir := t.TempDir()
	events, err := results.WriteResults(filepath.Join(dir, "events"), []runner.SequenceResult{{
		Name: "s", File: "s.yaml", Status: runner.Passed, StartedAt: time.Unix(0, 0), Duration: time.Millisecond,
		Steps: []runner.StepResult{{Path: "0", Kind: "send", Name: "x", Status: runner.Passed}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(dir, "junit.xml")
	if err := os.MkdirAll(filepath.Join(junit, "in-the-way"), 0o755); err != nil {
		t.Fatal(err)
	}
	jsonPath := filepath.Join(dir, "report.json")
	ios := &IO{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
	err = writeReports(context.Background(), ios, &RunOptions{JUnit: junit, JSON: jsonPath}, events, nil)
	if err == nil || !strings.Contains(err.Error(), "JUnit report "+junit+" not written") {
		t.Fatalf("error = %v, want one naming the JUnit report", err)
	}
	if strings.Contains(err.Error(), "JSON") {
		t.Errorf("error names the JSON report, which was written: %v", err)
	}
	data, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatalf("the JSON report was lost with the JUnit one: %v", err)
	}
	var doc struct{ Passed bool }
	if err := json.Unmarshal(data, &doc); err != nil || !doc.Passed {
		t.Errorf("JSON report: %v %s", err, data)
	}
}

// TestJUnitNamesTheHost: each testsuite of the JUnit report names the
// machine that ran it.
func TestJUnitNamesTheHost(t *testing.T) {
	host, err := os.Hostname()
	if err != nil || host == "" {
		t.Skipf("this machine has no host name: %v", err)
	}
	dir := t.TempDir()
	events, err := results.WriteResults(filepath.Join(dir, "events"), []runner.SequenceResult{{
		Name: "s", File: "s.yaml", Status: runner.Passed, StartedAt: time.Unix(0, 0),
		Steps: []runner.StepResult{{Path: "0", Kind: "send", Name: "x", Status: runner.Passed}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(dir, "junit.xml")
	ios := &IO{Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
	if err := writeReports(context.Background(), ios, &RunOptions{JUnit: junit}, events, nil); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Hostname string `xml:"hostname,attr"`
		} `xml:"testsuite"`
	}
	data, err := os.ReadFile(junit)
	if err == nil {
		err = xml.Unmarshal(data, &doc)
	}
	if err != nil || len(doc.Suites) != 1 || doc.Suites[0].Hostname != host {
		t.Errorf("testsuites %+v (%v), want one with hostname %q:\n%s", doc.Suites, err, host, data)
	}
}

package report

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// junitSchema is the schema that every JUnit report hilrun writes keeps
// to: junit-10's rules, as strict CI readers apply them.
const junitSchema = "../../schemas/junit.xsd"

// TestJUnitSchema checks the JUnit reports of passing, failing, errored,
// interrupted and merged runs, and of runs full of hostile text, against
// the schema with xmllint, as a strict CI server would read them.
func TestJUnitSchema(t *testing.T) {
	xmllint := testenv.NeedTool(t, "xmllint", "apt-get install libxml2-utils")
	all := fixture()
	interrupted := runner.SequenceResult{
		Name: "power", File: "seq/power.yaml", Status: runner.Interrupted, StartedAt: base,
		Error: "write /dev/ttyUSB0: input/output error",
		Steps: []runner.StepResult{
			{Path: "0", Kind: "expect", Name: "boot", Status: runner.Interrupted, Message: "interrupted"},
			{Path: "1", Kind: "send", Name: "test", Status: runner.Skipped, Message: "not run"},
			{Path: "finally.0", Kind: "send", Name: "off", Status: runner.Errored, Message: "write /dev/ttyUSB0: input/output error"},
		},
	}
	dir := t.TempDir()
	_, shard1 := writeShard(t, dir, "shard1", all[:3], &Shard{Index: 1, Total: 2, Sequences: len(all), Plan: "p"})
	_, shard2 := writeShard(t, dir, "shard2", all[3:], &Shard{Index: 2, Total: 2, Sequences: len(all), Plan: "p"})
	var merged bytes.Buffer
	if err := MergeJUnit(&merged, files.Anywhere(), []string{shard1, shard2}); err != nil {
		t.Fatal(err)
	}
	shard, err := os.ReadFile(shard1)
	if err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name   string
		report []byte
	}{
		{"passing", junitReport(t, all[:1])},
		{"failing", junitReport(t, all[1:2])},
		{"errored", junitReport(t, all[2:3])},
		{"interrupted", junitReport(t, all[3:4])},
		{"interrupted, then a finally step errored", junitReport(t, []runner.SequenceResult{interrupted})},
		{"setup failed", junitReport(t, all[4:5])},
		{"repeat failed", junitReport(t, all[5:6])},
		{"empty", junitReport(t, nil)},
		{"no hostname", func() []byte {
			var b bytes.Buffer
			if err := WriteJUnit(&b, eventFile(t, all), JUnitOptions{}); err != nil {
				t.Fatal(err)
			}
			return b.Bytes()
		}()},
		{"shard", shard},
		{"merged", merged.Bytes()},
		{"hostile bytes", hostileReport(t)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "junit.xml")
			if err := os.WriteFile(path, tt.report, 0o644); err != nil {
				t.Fatal(err)
			}
			out, err := exec.Command(xmllint, "--noout", "--schema", junitSchema, path).CombinedOutput()
			if err != nil {
				t.Errorf("xmllint refuses the report: %v\n%s\nreport:\n%s", err, out, tt.report)
			}
		})
	}
}

package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/jstemmer/go-junit-report/v2/junit"

	"github.com/hilrun/hilrun/pkg/runner"
)

func junitReport(t *testing.T, seqs []runner.SequenceResult) []byte {
	t.Helper()
	var out bytes.Buffer
	opts := JUnitOptions{Hostname: "bench-1", Now: func() time.Time { return base }}
	if err := WriteJUnit(&out, eventFile(t, seqs), opts); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

// parseJUnit decodes a report the way a CI server would, failing the test
// when it is not well-formed XML.
func parseJUnit(t *testing.T, data []byte) junit.Testsuites {
	t.Helper()
	var suites junit.Testsuites
	dec := xml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&suites); err != nil {
		t.Fatalf("report does not parse: %v\n%s", err, data)
	}
	// Decode stops after the root element; make sure nothing after it is
	// broken either.
	for {
		if _, err := dec.Token(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("report does not parse after the root element: %v", err)
			}
			break
		}
	}
	return suites
}

func TestJUnitGolden(t *testing.T) {
	out := junitReport(t, fixture())
	golden(t, "junit.golden.xml", out)
}

func TestJUnitCounts(t *testing.T) {
	suites := parseJUnit(t, junitReport(t, fixture()))

	type counts struct {
		tests, failures, errors, skipped int
		cases                            []string
	}
	want := []counts{
		// A testcase is a top-level entry: a group with its nested groups,
		// or a step; a repeat is one testcase, never one per iteration.
		{7, 0, 0, 0, []string{"00 send help", "01 login", "02 repeat poll ack", "03 capture read id", "04 assert regs",
			"05 camera led on", "finally.0 set cleanup"}},
		{4, 1, 0, 1, []string{"00 send erase all", "01 expect erase done", "02 send reset", "finally.0 send power off"}},
		{2, 0, 1, 0, []string{"00 send ifconfig", "01 expect link up"}},
		// An interrupt comes first.
		{2, 0, 1, 0, []string{"(interrupted)", "00 delay settle"}},
		{1, 0, 1, 0, []string{"setup"}},
		{1, 1, 0, 0, []string{"00 repeat ping pong"}},
	}
	if len(suites.Suites) != len(want) {
		t.Fatalf("got %d testsuites, want %d", len(suites.Suites), len(want))
	}
	var total counts
	for i, s := range suites.Suites {
		w := want[i]
		checkSorted(t, s)
		total.tests += w.tests
		total.failures += w.failures
		total.errors += w.errors
		total.skipped += w.skipped
		if s.Tests != w.tests || s.Failures != w.failures || s.Errors != w.errors || s.Skipped != w.skipped {
			t.Errorf("suite %q: tests/failures/errors/skipped = %d/%d/%d/%d, want %d/%d/%d/%d",
				s.Name, s.Tests, s.Failures, s.Errors, s.Skipped, w.tests, w.failures, w.errors, w.skipped)
		}
		// The attributes must agree with the testcases themselves.
		var failures, errs, skipped int
		var names []string
		for _, tc := range s.Testcases {
			names = append(names, tc.Name)
			if tc.Failure != nil {
				failures++
			}
			if tc.Error != nil {
				errs++
			}
			if tc.Skipped != nil {
				skipped++
			}
			if tc.Classname != s.Name {
				t.Errorf("testcase %q has classname %q, want %q", tc.Name, tc.Classname, s.Name)
			}
		}
		if len(s.Testcases) != s.Tests || failures != s.Failures || errs != s.Errors || skipped != s.Skipped {
			t.Errorf("suite %q: attributes disagree with its %d testcases", s.Name, len(s.Testcases))
		}
		if strings.Join(names, "|") != strings.Join(w.cases, "|") {
			t.Errorf("suite %q testcases:\n got %q\nwant %q", s.Name, names, w.cases)
		}
	}
	// junit-10 has no skipped count on <testsuites>.
	if suites.Tests != total.tests || suites.Failures != total.failures || suites.Errors != total.errors || suites.Skipped != 0 {
		t.Errorf("testsuites totals = %d/%d/%d/%d, want %d/%d/%d/0", suites.Tests, suites.Failures, suites.Errors, suites.Skipped,
			total.tests, total.failures, total.errors)
	}

	flash := suites.Suites[1]
	if flash.File != "seq/flash.yaml" || flash.Timestamp != "2025-03-14T09:26:55Z" || flash.Time != "2.500" || flash.Hostname != "bench-1" {
		t.Errorf("flash suite attributes: file %q timestamp %q time %q hostname %q", flash.File, flash.Timestamp, flash.Time, flash.Hostname)
	}
	f := flash.Testcases[1].Failure
	for _, want := range []string{"expected: \"done\"", "received:\n  erase sector 0\n", "  => \n", "at seq/flash.yaml:12:5"} {
		if !strings.Contains(f.Data, want) {
			t.Errorf("failure body lacks %q:\n%s", want, f.Data)
		}
	}
	if f.Message != `timed out after 2s waiting for "done"` {
		t.Errorf("failure message = %q", f.Message)
	}
	if !strings.Contains(flash.SystemOut.Data, "== console dut (first 2048 bytes dropped) ==\nerasing...\\x1b[32mOK") {
		t.Errorf("transcript header or escaping wrong:\n%s", flash.SystemOut.Data)
	}
	if power := suites.Suites[3].Testcases[0].Error; power.Type != "interrupted" || power.Message != "interrupted" {
		t.Errorf("interrupted sequence testcase error = %+v", power)
	}
}

// TestJUnitGroupStatus checks how a group testcase sums up its steps and how a
// container that failed alone is reported.
func TestJUnitGroupStatus(t *testing.T) {
	step := func(path, group string, st runner.Status) runner.StepResult {
		return runner.StepResult{Path: path, Kind: "expect", Name: "x", Group: group, Status: st, Message: path + " " + string(st)}
	}
	tests := []struct {
		name  string
		steps []runner.StepResult
		want  string // per testcase: name=status
	}{
		{"all passed", []runner.StepResult{step("0.0", "g", runner.Passed), step("0.1", "g", runner.Passed)}, "00 g=passed"},
		{"one failed", []runner.StepResult{step("0.0", "g", runner.Passed), step("0.1", "g", runner.Failed)}, "00 g=failed:0.1 failed"},
		{"error wins", []runner.StepResult{step("0.0", "g", runner.Failed), step("0.1", "g", runner.Errored)}, "00 g=error:0.1 error"},
		{"interrupted", []runner.StepResult{step("0.0", "g", runner.Interrupted)}, "00 g=error:0.0 interrupted"},
		{"all skipped", []runner.StepResult{step("0.0", "g", runner.Skipped), step("0.1", "g", runner.Skipped)}, "00 g=skipped"},
		{"some skipped", []runner.StepResult{step("0.0", "g", runner.Passed), step("0.1", "g", runner.Skipped)}, "00 g=passed"},
		{"container failed alone", []runner.StepResult{
			step("0.0", "g", runner.Passed),
			{Path: "0", Kind: "group", Name: "g", Status: runner.Failed, Message: "group timed out"},
		}, "00 g=failed:group timed out"},
		{"container failed with its step", []runner.StepResult{
			step("0.0", "g", runner.Failed),
			{Path: "0", Kind: "group", Name: "g", Status: runner.Failed, Message: "group failed"},
		}, "00 g=failed:0.0 failed"},
		{"empty repeat failed", []runner.StepResult{
			{Path: "3", Kind: "repeat", Name: "poll", Status: runner.Failed, Message: "until never true"},
		}, "03 repeat poll=failed:until never true"},
		{"wide paths", []runner.StepResult{step("7", "", runner.Passed), step("123", "", runner.Passed)}, "007 expect x=passed|123 expect x=passed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq := runner.SequenceResult{Name: "s", File: "s.yaml", Status: runner.Passed, StartedAt: base, Steps: tt.steps}
			for _, s := range tt.steps {
				if isProblem(s.Status) {
					seq.Status = runner.Failed
				}
			}
			suites := parseJUnit(t, junitReport(t, []runner.SequenceResult{seq}))
			var got []string
			for _, tc := range suites.Suites[0].Testcases {
				st := "passed"
				switch {
				case tc.Error != nil:
					st = "error:" + tc.Error.Message
				case tc.Failure != nil:
					st = "failed:" + tc.Failure.Message
				case tc.Skipped != nil:
					st = "skipped"
				}
				got = append(got, tc.Name+"="+st)
			}
			if g := strings.Join(got, "|"); g != tt.want {
				t.Errorf("got %s, want %s", g, tt.want)
			}
		})
	}
}

// hostileSequence holds every byte value, invalid UTF-8, XML
// noncharacters and CDATA terminators in every field that reaches a report.
func hostileSequence() runner.SequenceResult {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	hostile := string(all) + "\uFFFE\uFFFF]]>]]]]><![CDATA[</testsuite>&amp;\xed\xa0\x80"
	// A "#" in a path marks an iteration of a repeat, which a testcase
	// summarises: the runner never makes one outside a repeat.
	return runner.SequenceResult{
		Name: hostile, File: hostile, Status: runner.Failed, StartedAt: base, Error: hostile,
		Steps: []runner.StepResult{
			{Path: strings.ReplaceAll(hostile, "#", ""), Kind: hostile, Name: hostile, Status: runner.Failed, File: hostile, Line: 1, Column: 2,
				Message: hostile, Expected: hostile, Received: hostile},
			{Path: "1", Kind: "send", Name: "x", Group: hostile, Status: runner.Errored, Message: hostile},
			{Path: "2", Kind: "send", Name: hostile, Status: runner.Skipped, Message: hostile},
		},
		Transcripts: []runner.Transcript{{Console: hostile, Data: []byte(hostile)}, {Console: "raw", Data: all}},
	}
}

// hostileReport is the JUnit report of hostileSequence.
func hostileReport(t *testing.T) []byte {
	t.Helper()
	return junitReport(t, []runner.SequenceResult{hostileSequence()})
}

// TestJUnitHostileBytes feeds every byte value, invalid UTF-8, XML
// noncharacters and CDATA terminators through every field that reaches the
// report, and checks that the file still parses.
func TestJUnitHostileBytes(t *testing.T) {
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	seq := hostileSequence()
	out := junitReport(t, []runner.SequenceResult{seq})
	suites := parseJUnit(t, out)
	s := suites.Suites[0]
	if s.Tests != 3 || s.Failures != 1 || s.Errors != 1 || s.Skipped != 1 {
		t.Errorf("tests/failures/errors/skipped = %d/%d/%d/%d, want 3/1/1/1", s.Tests, s.Failures, s.Errors, s.Skipped)
	}
	if s.SystemOut == nil || !strings.Contains(s.SystemOut.Data, `\x00\x01`) || !strings.Contains(s.SystemOut.Data, `\x1b`) ||
		!strings.Contains(s.SystemOut.Data, `\xff`) || !strings.Contains(s.SystemOut.Data, `\ufffe`) {
		t.Errorf("transcript lacks escaped control bytes:\n%q", s.SystemOut)
	}
	if s.SystemErr == nil || !strings.Contains(s.SystemErr.Data, "]]>") {
		t.Errorf("sequence error lost its CDATA terminator: %q", s.SystemErr)
	}
	if f := s.Testcases[0].Failure; f == nil || !strings.Contains(f.Message, `\x1b`) || !strings.Contains(f.Data, `\x7f`) {
		t.Errorf("failure lacks escaped bytes: %+v", f)
	}
	if bytes.ContainsAny(out, "\x00\x1b\x7f") {
		t.Error("report holds raw control bytes")
	}
}

func TestJUnitEmpty(t *testing.T) {
	suites := parseJUnit(t, junitReport(t, nil))
	if len(suites.Suites) != 0 || suites.Tests != 0 {
		t.Errorf("empty run gave %+v", suites)
	}
}

// TestJUnitPIOTestCases checks that each test case a pio_test step ran is
// a testcase of its own: alone, the step is its cases; in a group, they
// follow the group's testcase.
func TestJUnitPIOTestCases(t *testing.T) {
	cases := []any{
		map[string]any{"suite": "test_ring", "env": "uno", "name": "test_ring_push", "status": "PASSED", "message": "", "file": "test/test_ring/test_main.c", "line": 31, "duration_ms": 0.0},
		map[string]any{"suite": "test_ring", "env": "uno", "name": "test_ring_wrap", "status": "FAILED", "message": "Expected 4 Was 0", "file": "test/test_ring/test_main.c", "line": 42, "duration_ms": 12.5},
		map[string]any{"suite": "test_ring", "env": "uno", "name": "test_ring_dma", "status": "SKIPPED", "message": "needs DMA", "file": "test/test_ring/test_main.c", "line": 50, "duration_ms": 0.0},
	}
	pioStep := func(path, group string) runner.StepResult {
		return runner.StepResult{Path: path, Kind: "pio_test", Name: "pio fw -e uno", Group: group, Status: runner.Failed,
			Message: "3 test cases: 1 passed, 1 failed, 1 skipped", Data: map[string]any{"cases": cases}}
	}
	tests := []struct {
		name  string
		steps []runner.StepResult
		want  string
	}{
		{"alone", []runner.StepResult{pioStep("0", ""), {Path: "1", Kind: "expect", Name: "boot", Status: runner.Passed}},
			"00 pio_test pio fw -e uno: 1 test_ring/test_ring_push=passed|00 pio_test pio fw -e uno: 2 test_ring/test_ring_wrap=failed:Expected 4 Was 0|00 pio_test pio fw -e uno: 3 test_ring/test_ring_dma=skipped|01 expect boot=passed"},
		{"in a group", []runner.StepResult{pioStep("0.0", "unit"), {Path: "0.1", Kind: "expect", Name: "boot", Group: "unit", Status: runner.Passed}},
			"00 unit=failed:3 test cases: 1 passed, 1 failed, 1 skipped|00 unit 00.0 pio_test pio fw -e uno: 1 test_ring/test_ring_push=passed|00 unit 00.0 pio_test pio fw -e uno: 2 test_ring/test_ring_wrap=failed:Expected 4 Was 0|00 unit 00.0 pio_test pio fw -e uno: 3 test_ring/test_ring_dma=skipped"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq := runner.SequenceResult{Name: "s", File: "s.yaml", Status: runner.Failed, StartedAt: base, Steps: tt.steps}
			suites := parseJUnit(t, junitReport(t, []runner.SequenceResult{seq}))
			s := suites.Suites[0]
			checkSorted(t, s)
			var got []string
			failures := 0
			for _, tc := range s.Testcases {
				st := "passed"
				switch {
				case tc.Error != nil:
					st = "error:" + tc.Error.Message
				case tc.Failure != nil:
					st = "failed:" + tc.Failure.Message
					failures++
				case tc.Skipped != nil:
					st = "skipped"
				}
				got = append(got, tc.Name+"="+st)
			}
			if g := strings.Join(got, "|"); g != tt.want {
				t.Errorf("got  %s\nwant %s", g, tt.want)
			}
			if s.Tests != len(s.Testcases) || s.Failures != failures {
				t.Errorf("suite counts tests=%d failures=%d, testcases %d failures %d", s.Tests, s.Failures, len(s.Testcases), failures)
			}
		})
	}
}

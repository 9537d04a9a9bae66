package report

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// base is when the first fixture sequence started.
var base = time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC)

// fixture returns hand-made results covering what reports must show: a
// passed sequence with named and nested groups, a repeat and labelled values;
// a failed one with expected/received, a skipped and a finally step and
// transcripts full of control bytes and invalid UTF-8; an errored one; an
// interrupted one whose steps all passed; and one that failed in setup.
func fixture() []runner.SequenceResult {
	ms := time.Millisecond
	us := time.Microsecond
	boot := runner.SequenceResult{
		Name:      "boot check",
		File:      "seq/boot.yaml",
		Status:    runner.Passed,
		StartedAt: base,
		Duration:  1234567 * us,
		Logs:      map[string]string{"dut": "logs/boot-dut.log"},
		Steps: []runner.StepResult{
			{Index: 0, Path: "0", Kind: "send", Name: "help", File: "seq/boot.yaml", Line: 5, Column: 5,
				Status: runner.Passed, Started: 0, Duration: 412 * us,
				Data: map[string]any{"sent": []byte("help\r\n")}},
			{Index: 1, Path: "1.0", Kind: "expect", Name: "login prompt", Group: "login", Line: 8, Column: 7,
				Status: runner.Passed, Started: 1 * ms, Duration: 10250 * us, Message: `matched "login:"`,
				Data: map[string]any{"match": "login:"}},
			{Index: 2, Path: "1.1", Kind: "send", Name: "root", Group: "login",
				Status: runner.Passed, Started: 11300 * us, Duration: 300 * us},
			{Index: 3, Path: "1.2.0", Kind: "capture", Name: "version", Group: "login / version",
				Status: runner.Passed, Started: 12 * ms, Duration: 20 * ms, Message: "captured version=1.2.3",
				Saved: map[string]any{"version": "1.2.3", "raw": []byte("v1.2.3\x1b[0m\r\n\\")}},
			{Index: 4, Path: "1.2", Kind: "group", Name: "version", Group: "login",
				Status: runner.Passed, Started: 12 * ms, Duration: 20 * ms},
			{Index: 5, Path: "1", Kind: "group", Name: "login",
				Status: runner.Passed, Started: 1 * ms, Duration: 31 * ms},
			{Index: 6, Path: "2#0.0", Kind: "send", Name: "poke", Status: runner.Passed, Started: 40 * ms, Duration: 100 * us},
			{Index: 7, Path: "2#0.1", Kind: "expect", Name: "ack", Status: runner.Passed, Started: 41 * ms, Duration: 5 * ms},
			{Index: 8, Path: "2#1.0", Kind: "send", Name: "poke", Status: runner.Passed, Started: 50 * ms, Duration: 100 * us},
			{Index: 9, Path: "2#1.1", Kind: "expect", Name: "ack", Status: runner.Passed, Started: 51 * ms, Duration: 6 * ms},
			{Index: 10, Path: "2", Kind: "repeat", Name: "poll ack", Status: runner.Passed, Started: 40 * ms, Duration: 17 * ms},
			{Index: 11, Path: "3", Kind: "capture", Name: "read id", Status: runner.Passed, Started: 60 * ms, Duration: 2 * ms,
				Data: map[string]any{"label": "chip id", "values": []uint64{0xdeadbeef, 0x1}}},
			{Index: 12, Path: "4", Kind: "assert", Name: "regs", Status: runner.Passed, Started: 63 * ms, Duration: 50 * us,
				Data: map[string]any{"label": "regs", "values": []any{uint64(0x20000000), 42, float64(16), "n/a"}, "width": 32}},
			{Index: 13, Path: "5", Kind: "camera", Name: "led on", Status: runner.Passed, Started: 70 * ms, Duration: 480 * ms,
				Message:     "1 picture(s) from top, image checks passed",
				Data:        map[string]any{"camera": "top", "frames": []string{"/var/hilrun/logs/led_on.png"}},
				Attachments: []string{"/var/hilrun/logs/led_on.png"}},
			{Index: 14, Path: "finally.0", Kind: "set", Name: "cleanup", Status: runner.Passed, Started: 1200 * ms, Duration: 10 * us,
				Saved: map[string]any{"done": true}},
		},
		Transcripts: []runner.Transcript{
			{Console: "dut", Data: []byte("U-Boot 2025.01\r\n=> help\r\nlogin: root\r\nversion 1.2.3\r\n=> ")},
		},
	}

	received := strings.Join([]string{
		"erase sector 0", "erase sector 1", "erase sector 2", "erase sector 3",
		"erase sector 4", "erase sector 5", "erase sector 6", "erase sector 7",
		"erase sector 8", "erase sector 9", `\x1b[31mERR\x1b[0m sector 10`, "retrying",
		"", "=> ",
	}, "\n")
	flash := runner.SequenceResult{
		Name:      "flash",
		File:      "seq/flash.yaml",
		Status:    runner.Failed,
		StartedAt: base.Add(2 * time.Second),
		Duration:  2500 * ms,
		Steps: []runner.StepResult{
			{Index: 0, Path: "0", Kind: "send", Name: "erase all", Status: runner.Passed, Started: 0, Duration: 1 * ms},
			{Index: 1, Path: "1", Kind: "expect", Name: "erase done", File: "seq/flash.yaml", Line: 12, Column: 5,
				Status: runner.Failed, Started: 100 * ms, Duration: 2000 * ms,
				Message:  `timed out after 2s waiting for "done"`,
				Expected: `"done"`, Received: received},
			{Index: 2, Path: "2", Kind: "send", Name: "reset", Status: runner.Skipped, Message: "skipped after a failure", Started: 2100 * ms},
			{Index: 3, Path: "finally.0", Kind: "send", Name: "power off", Status: runner.Passed, Started: 2101 * ms, Duration: 1500 * us},
		},
		Transcripts: []runner.Transcript{
			{Console: "dut", Truncated: 2048,
				Data: []byte("erasing...\x1b[32mOK\x1b[0m\r\n\xff\xfe bad \x00\x07 ]]> <&>\r\nprogress 10%\rprogress 100%\r\n\u00e9t\u00e9 \uFFFE\uFFFF")},
			{Console: "psu", Data: []byte("ok\n")},
		},
	}

	network := runner.SequenceResult{
		Name:      "network",
		File:      "seq/net.yaml",
		Status:    runner.Errored,
		StartedAt: base.Add(5 * time.Second),
		Duration:  750 * ms,
		Error:     "read /dev/ttyUSB1: input/output error",
		Steps: []runner.StepResult{
			{Index: 0, Path: "0", Kind: "send", Name: "ifconfig", Status: runner.Passed, Started: 0, Duration: 2 * ms},
			{Index: 1, Path: "1", Kind: "expect", Name: "link up", File: "seq/net.yaml", Line: 9, Column: 3,
				Status: runner.Errored, Started: 3 * ms, Duration: 700 * ms,
				Message: "read /dev/ttyUSB1: input/output error"},
		},
	}

	power := runner.SequenceResult{
		Name:      "power cycle",
		File:      "seq/power.yaml",
		Status:    runner.Interrupted,
		StartedAt: base.Add(6 * time.Second),
		Duration:  300 * ms,
		Error:     "interrupted",
		Steps: []runner.StepResult{
			{Index: 0, Path: "0", Kind: "delay", Name: "settle", Status: runner.Passed, Started: 0, Duration: 250 * ms},
		},
	}

	setup := runner.SequenceResult{
		Name:      "setup error",
		File:      "seq/setup.yaml",
		Status:    runner.Errored,
		StartedAt: base.Add(7 * time.Second),
		Duration:  5 * ms,
		Error:     "open /dev/ttyACM0: port busy (held by PID 4711, picocom)",
	}

	// A soak whose repeat failed in two of its five iterations: reports
	// show its statistics and its failing iterations, never one testcase
	// per iteration.
	soak := runner.SequenceResult{
		Name:      "soak",
		File:      "seq/soak.yaml",
		Status:    runner.Failed,
		StartedAt: base.Add(8 * time.Second),
		Duration:  60 * ms,
	}
	for i := 0; i < 5; i++ {
		at := time.Duration(i) * 10 * ms
		st, msg := runner.Passed, ""
		if i == 1 || i == 3 {
			st, msg = runner.Failed, fmt.Sprintf("timed out after 5ms waiting for %q", "pong")
		}
		soak.Steps = append(soak.Steps,
			runner.StepResult{Index: 2 * i, Path: fmt.Sprintf("0#%d.0", i), Kind: "send", Name: "ping", Status: runner.Passed,
				Started: at, Duration: 100 * us},
			runner.StepResult{Index: 2*i + 1, Path: fmt.Sprintf("0#%d.1", i), Kind: "expect", Name: "pong", Status: st,
				File: "seq/soak.yaml", Line: 7, Column: 9, Started: at + 100*us, Duration: time.Duration(1+i) * ms, Message: msg})
	}
	soak.Steps = append(soak.Steps, runner.StepResult{Index: 10, Path: "0", Kind: "repeat", Name: "ping pong",
		Status: runner.Failed, Started: 0, Duration: 50 * ms, Data: map[string]any{"iterations": 5}})

	return []runner.SequenceResult{boot, flash, network, power, setup, soak}
}

// eventFile records seqs in an event file, as a run would have.
func eventFile(t *testing.T, seqs []runner.SequenceResult) string {
	t.Helper()
	path, err := results.WriteResults(t.TempDir(), seqs)
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// golden compares got with testdata/name, or rewrites the file under -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if bytes.Equal(got, want) {
		return
	}
	gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(gl), len(wl)); i++ {
		var g, w string
		if i < len(gl) {
			g = gl[i]
		}
		if i < len(wl) {
			w = wl[i]
		}
		if g != w {
			t.Fatalf("%s differs from the output at line %d (run go test -update to accept):\n got: %q\nwant: %q", path, i+1, g, w)
		}
	}
	t.Fatalf("%s differs from the output", path)
}

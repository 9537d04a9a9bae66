package report

import (
	"bytes"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// labelled is a run whose labels hold values: a send the runner named by
// the text it sent, a memory read by an expression, an unnamed repeat.
func labelled() runner.SequenceResult {
	ms := time.Millisecond
	return runner.SequenceResult{
		Name: "adc", File: "seq/adc.yaml", Status: runner.Failed, StartedAt: base, Duration: 40 * ms,
		Steps: []runner.StepResult{
			{Index: 0, Path: "0", Kind: "mem_read", Name: "gpio_base + 0x10", Status: runner.Passed, Duration: ms,
				Data: map[string]any{"label": "gpio_base + 0x10", "address": uint64(0x48000010), "width": 32, "values": []uint64{0x20}}},
			{Index: 1, Path: "1", Kind: "mem_read", Name: "0x48000014", Status: runner.Passed, Started: 2 * ms, Duration: ms,
				Data: map[string]any{"label": "0x48000014", "address": uint64(0x48000014), "width": 32, "values": []uint64{0}}},
			{Index: 2, Path: "2#0.0", Kind: "send", Name: "echo adc=000", Status: runner.Passed, Started: 4 * ms, Duration: ms,
				Data: map[string]any{"sent": "echo adc=000\n"}},
			{Index: 3, Path: "2#1.0", Kind: "send", Name: "echo adc=100", Status: runner.Failed, Started: 6 * ms, Duration: 20 * ms,
				Message: `timed out after 20ms waiting for "adc=100"; nothing received`, Expected: `"adc=100"`,
				Data: map[string]any{"sent": "echo adc=100\n"}},
			{Index: 4, Path: "2", Kind: "repeat", Name: "2 times", Status: runner.Failed, Started: 4 * ms, Duration: 22 * ms},
		},
	}
}

func TestLabelsInReports(t *testing.T) {
	seq := labelled()
	var out bytes.Buffer
	c := NewConsole(&out, ConsoleOptions{Now: fakeClock(base, time.Second)})
	for _, e := range events(seq) {
		c.Event(e)
	}
	golden(t, "console_labels.golden", out.Bytes())
	golden(t, "junit_labels.golden.xml", junitReport(t, []runner.SequenceResult{seq}))

	var js bytes.Buffer
	if err := WriteJSON(&js, eventFile(t, []runner.SequenceResult{seq}), results.Options{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "report_labels.golden.json", js.Bytes())
}

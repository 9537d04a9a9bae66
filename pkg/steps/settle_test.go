package steps_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/steps"
)

func TestSettle(t *testing.T) {
	seq, err := steps.Parse("s.yaml", []byte(`
devices:
  dut: {port: /dev/ttyACM0, settle: 250ms}
  aux: /dev/ttyUSB0
steps:
  - send: adc read
    to: dut
    expect: {regex: 'adc=(\d+)'}
    settle: 2s
  - expect: x
    to: aux
    settle: 0s
  - capture: {until: {regex: 'n=\d+'}}
    to: aux
    settle: 100ms
  - send: y
    to: aux
`), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dut, aux := seq.Device("dut"), seq.Device("aux")
	if dut.Settle == nil || *dut.Settle != 250*time.Millisecond || aux.Settle != nil {
		t.Errorf("device settle: dut %v, aux %v; want 250ms and unset", dut.Settle, aux.Settle)
	}
	for i, want := range []time.Duration{2 * time.Second, 0, 100 * time.Millisecond} {
		if s := seq.Steps[i].Settle; s == nil || *s != want {
			t.Errorf("step %d settle = %v, want %s", i, s, want)
		}
	}
	if seq.Steps[3].Settle != nil {
		t.Errorf("step 3 settle = %v, want unset", *seq.Steps[3].Settle)
	}

	// A bench file sets it too, over the sequence's.
	bench := filepath.Join(t.TempDir(), steps.BenchFile)
	if err := os.WriteFile(bench, []byte("devices:\n  dut: {port: /dev/ttyACM3, settle: 50ms}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := steps.LoadBench(files.Anywhere(), bench)
	if err != nil {
		t.Fatal(err)
	}
	seq, err = steps.Bind(seq, steps.Binding{Bench: b})
	if err != nil {
		t.Fatal(err)
	}
	if s := seq.Device("dut").Settle; s == nil || *s != 50*time.Millisecond {
		t.Errorf("bound settle = %v, want 50ms", s)
	}
}

func TestSettleErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"bare number", "steps:\n  - expect: x\n    settle: 100\n", `a.yaml:3:13: settle must be a duration with a unit`},
		{"negative", "steps:\n  - expect: x\n    settle: -1s\n", `a.yaml:3:13: settle: "-1s" is not a duration`},
		{"too long", "devices:\n  d: {port: /dev/null, settle: 2m}\nsteps: [{expect: x}]\n", `a.yaml:2:32: settle must be at most 1m0s, found 2m0s`},
		{"not on a delay", "steps:\n  - delay: 1s\n    settle: 1s\n", `a.yaml:3:5: unknown key "settle" in a delay step`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := steps.Parse("a.yaml", []byte(tt.src), steps.LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want %s", err, tt.want)
			}
		})
	}
}

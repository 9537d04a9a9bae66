package runner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// BenchmarkStepOwnTime is the runner's own time per send/expect step,
// against a device model that answers within the write (no pty, no
// scheduler hand-off) and a sink that discards: what the runner itself
// costs a step, and what it allocates. internal/engine's
// BenchmarkStepGap measures the same steps on the virtual board with
// hilrun run's sinks.
func BenchmarkStepOwnTime(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchOwnTime(b, "") })
	// A device with a prompt: each send waits for it and races it.
	b.Run("prompt", func(b *testing.B) { benchOwnTime(b, "devices:\n  dut: {prompt: 'sim> '}\n") })
}

func benchOwnTime(b *testing.B, devices string) {
	const n = 300
	var src strings.Builder
	src.WriteString("name: own\n" + devices + "steps:\n")
	for i := range n {
		fmt.Fprintf(&src, "  - send: echo x%d\n    expect: x%d\n", i, i)
	}
	seq, err := steps.Parse("own.yaml", []byte(src.String()), steps.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	sink := runner.SinkFunc(func(runner.Event) {})
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		dev := newDevice(shell)
		res := runner.Run(context.Background(), seq, runner.Bench{
			Open: func(ctx context.Context, d *steps.Device) (runner.Console, error) { return dev, nil },
		}, runner.Options{Sink: sink})
		if res.Status != runner.Passed {
			b.Fatalf("the sequence did not pass: %s", res.Error)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n)/1000, "µs/step")
}

// The child sides of scenario (a): round trips through the runner and
// through a serialx console.

package bench

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// rttRunner times warmup+n send/expect steps run by the runner, as a user
// writes them: a repeat whose step sends "echo ping-${i}" and expects the
// reply and the prompt. Each sample is the step's duration as the runner
// measured it. With regex, the step expects `ping-(\d+)\r\n` and saves the
// number instead: a regexp whose match a delimiter ends.
func rttRunner(ctx context.Context, port string, n, warmup int, regex bool) (childOutput, error) {
	expect := quoteYAML("ping-${i}\r\n" + prompt)
	if regex {
		expect = `{regex: 'ping-(\d+)\r\n'}` + "\n        save: n"
	}
	src := fmt.Sprintf(`name: rtt
expect_timeout: 10s
steps:
%s  - repeat: {count: %d, as: i}
    steps:
      - send: echo ping-${i}
        expect: %s
`, syncSteps, warmup+n, expect)
	res, err := runSequence(ctx, src, port, "")
	if err != nil {
		return childOutput{}, err
	}
	sends := stepsOf(res, steps.KindSend)
	if len(sends) != 1+warmup+n {
		return childOutput{}, fmt.Errorf("ran %d send steps, want %d", len(sends), 1+warmup+n)
	}
	var out childOutput
	for _, s := range sends[1+warmup:] {
		out.SamplesNs = append(out.SamplesNs, s.Duration.Nanoseconds())
	}
	return out, nil
}

// rttConsole times warmup+n round trips through a serialx console
// directly: Write, then Expect from the cursor Write returned.
func rttConsole(ctx context.Context, port string, n, warmup int) (childOutput, error) {
	c, err := openSynced(ctx, port, "")
	if err != nil {
		return childOutput{}, err
	}
	defer c.Close()
	var out childOutput
	for i := range warmup + n {
		line := []byte("echo ping-" + strconv.Itoa(i) + "\n")
		want := []stream.Pattern{stream.Literal("ping-" + strconv.Itoa(i) + "\r\n" + prompt)}
		t0 := time.Now()
		cur, err := c.Write(ctx, line)
		if err != nil {
			return childOutput{}, err
		}
		if _, err := c.Expect(ctx, cur, want, nil); err != nil {
			return childOutput{}, err
		}
		if d := time.Since(t0); i >= warmup {
			out.SamplesNs = append(out.SamplesNs, d.Nanoseconds())
		}
	}
	return out, nil
}

// stepsRunner runs (v)'s sequence, n send/expect steps written out one by
// one, with the engine hilrun run uses but no progress console, and
// returns each step's start and duration after the sync step.
func stepsRunner(ctx context.Context, port string, n int) (childOutput, error) {
	res, err := runSequence(ctx, stepsYAML(n), port, "")
	if err != nil {
		return childOutput{}, err
	}
	sends := stepsOf(res, steps.KindSend)
	if len(sends) != 1+n {
		return childOutput{}, fmt.Errorf("ran %d send steps, want %d", len(sends), 1+n)
	}
	var out childOutput
	for _, s := range sends[1:] {
		out.StartedNs = append(out.StartedNs, s.Started.Nanoseconds())
		out.SamplesNs = append(out.SamplesNs, s.Duration.Nanoseconds())
	}
	return out, nil
}

package runner_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// flakyShell answers "flaky NAME N" with FAIL for the first N calls of
// NAME and OK after, and everything else as shell does.
func flakyShell() func(string) string {
	var mu sync.Mutex
	calls := map[string]int{}
	return func(line string) string {
		var name string
		var fails int
		if _, err := fmt.Sscanf(line, "flaky %s %d", &name, &fails); err != nil {
			return shell(line)
		}
		mu.Lock()
		defer mu.Unlock()
		calls[name]++
		if calls[name] <= fails {
			return "FAIL " + name + "\r\nsim> "
		}
		return "OK " + name + "\r\nsim> "
	}
}

func attemptsOf(list []runner.AttemptResult) string {
	var s []string
	for _, a := range list {
		s = append(s, fmt.Sprintf("%d/%d:%s", a.Attempt, a.Of, a.Status))
	}
	return strings.Join(s, " ")
}

// withPrompt gives a test sequence's console the shell's prompt, so that
// an expect after a send fails at the reply's end, not after a timeout.
func withPrompt(src string) string { return "devices: {console: {prompt: \"sim> \"}}\n" + src }

func TestRetries(t *testing.T) {
	tests := []struct {
		name         string
		src          string
		want         runner.Status
		flaky        bool
		seqAttempts  string
		groupAttempt string
		paths        string
	}{
		{
			name: "a group that fails once and passes is flaky",
			src: `steps:
  - send: version
  - group: adc
    retries: 2
    before_retry:
      - send: echo reset
    steps:
      - send: flaky adc 1
        expect: OK adc
`,
			want: runner.Passed, flaky: true, groupAttempt: "1/3:failed 2/3:passed",
			paths: "0:passed 1.0:failed@1 1.before_retry.0:passed@2 1.0:passed@2 1:passed",
		},
		{
			name: "a group that never passes fails, once per attempt",
			src: `steps:
  - group: adc
    retries: 1
    steps:
      - send: flaky adc 5
        expect: OK adc
      - send: version
`,
			want: runner.Failed, groupAttempt: "1/2:failed 2/2:failed",
			paths: "0.0:failed@1 0.1:skipped@1 0.0:failed@2 0.1:skipped@2 0:failed",
		},
		{
			name: "a sequence retried from its first step",
			src: `retries: 2
before_retry:
  - send: echo reset
steps:
  - send: version
  - send: flaky seq 2
    expect: OK seq
`,
			want: runner.Passed, flaky: true, seqAttempts: "1/3:failed 2/3:failed 3/3:passed",
			paths: "0:passed@1 1:failed@1 before_retry.0:passed@2 0:passed@2 1:failed@2 before_retry.0:passed@3 0:passed@3 1:passed@3",
		},
		{
			name: "a group that passes at once has one attempt",
			src: `steps:
  - group: adc
    retries: 2
    steps:
      - send: version
`,
			want: runner.Passed, groupAttempt: "1/3:passed",
			paths: "0.0:passed@1 0:passed",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, context.Background(), load(t, withPrompt(tt.src)), newDevice(flakyShell()), nil)
			if res.Status != tt.want || res.Flaky != tt.flaky {
				t.Errorf("status %s, flaky %v; want %s, %v (%s)", res.Status, res.Flaky, tt.want, tt.flaky, res.Error)
			}
			if got := attemptsOf(res.Attempts); got != tt.seqAttempts {
				t.Errorf("sequence attempts %q, want %q", got, tt.seqAttempts)
			}
			var paths []string
			for _, st := range res.Steps {
				p := st.Path + ":" + string(st.Status)
				if st.Attempt > 0 {
					p += fmt.Sprintf("@%d", st.Attempt)
				}
				paths = append(paths, p)
				if st.Kind == "group" {
					if got := attemptsOf(st.Attempts); got != tt.groupAttempt {
						t.Errorf("group attempts %q, want %q", got, tt.groupAttempt)
					}
					if st.Flaky != (tt.want == runner.Passed && len(st.Attempts) > 1) {
						t.Errorf("group flaky = %v", st.Flaky)
					}
				}
			}
			if got := strings.Join(paths, " "); got != tt.paths {
				t.Errorf("steps:\n got %s\nwant %s", got, tt.paths)
			}
		})
	}
}

func TestRetryDiscardsTheAttemptsVariables(t *testing.T) {
	src := `vars: {n: 0}
retries: 1
steps:
  - set: {n: {expr: n + 1}}
  - send: flaky v 1
    expect: OK v
  - assert: n == 1
`
	res := run(t, context.Background(), load(t, withPrompt(src)), newDevice(flakyShell()), nil)
	if res.Status != runner.Passed {
		t.Fatalf("status %s (%s): the second attempt must start from n = 0; steps %s", res.Status, res.Error, statuses(res))
	}
}

func TestRetryAttemptEvents(t *testing.T) {
	src := `steps:
  - group: adc
    retries: 1
    steps:
      - send: flaky adc 1
        expect: OK adc
`
	rec := &recorder{}
	res := run(t, context.Background(), load(t, withPrompt(src)), newDevice(flakyShell()), rec)
	if res.Status != runner.Passed {
		t.Fatalf("status %s", res.Status)
	}
	var got []runner.AttemptResult
	for _, e := range rec.events {
		if e.Type == runner.AttemptFinished {
			got = append(got, *e.Attempt)
		}
	}
	if len(got) != 2 {
		t.Fatalf("%d attempt events, want 2", len(got))
	}
	first := got[0]
	if first.Scope != "0" || first.Name != "adc" || !first.Retried || first.String() != "attempt 1 of 2" ||
		first.Executions.Failed != 1 || !strings.Contains(first.Output, "FAIL adc") || first.Message == "" {
		t.Errorf("first attempt = %+v", first)
	}
	if second := got[1]; second.Retried || second.Status != runner.Passed || !strings.Contains(second.Output, "OK adc") || strings.Contains(second.Output, "FAIL") {
		t.Errorf("second attempt = %+v: want its own output only", second)
	}
}

func TestRetryKeepsAnInfrastructureError(t *testing.T) {
	src := `retries: 1
steps:
  - send: version
`
	dev := newDevice(shell)
	dev.failErr = errors.New("port vanished")
	res := run(t, context.Background(), load(t, withPrompt(src)), dev, nil)
	if res.Status != runner.Errored || len(res.Attempts) != 2 || res.Flaky {
		t.Fatalf("status %s, attempts %s: an error in every attempt stays an error", res.Status, attemptsOf(res.Attempts))
	}
}

func TestRunRetriesOption(t *testing.T) {
	seq := load(t, withPrompt("steps:\n  - send: flaky o 1\n    expect: OK o\n"))
	res := runner.Run(context.Background(), seq, runner.Bench{
		Open: func(context.Context, *steps.Device) (runner.Console, error) { return newDevice(flakyShell()), nil },
	}, runner.Options{Retries: 1})
	if res.Status != runner.Passed || !res.Flaky {
		t.Errorf("with Options.Retries 1: status %s, flaky %v; want a flaky pass", res.Status, res.Flaky)
	}
	own := load(t, withPrompt("retries: 0\nsteps:\n  - send: flaky o 1\n    expect: OK o\n"))
	res = runner.Run(context.Background(), own, runner.Bench{
		Open: func(context.Context, *steps.Device) (runner.Console, error) { return newDevice(flakyShell()), nil },
	}, runner.Options{Retries: 1})
	if res.Status != runner.Failed || len(res.Attempts) != 0 {
		t.Errorf("retries: 0 in the file wins over the run's: status %s, %d attempts", res.Status, len(res.Attempts))
	}
}

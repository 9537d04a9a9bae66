package steps_test

import (
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/steps"
)

func TestParseRetries(t *testing.T) {
	src := `name: r
retries: 2
before_retry:
  - send: flaky reset
steps:
  - group: adc
    retries: 1
    before_retry:
      - send: reboot
    steps:
      - send: flaky adc 1
        expect: OK
`
	seq, err := steps.Parse("r.yaml", []byte(src), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if seq.Retry.Retries() != 2 || !seq.Retry.Set || len(seq.Retry.Before()) != 1 {
		t.Errorf("sequence retry = %+v, want 2 retries and one before_retry step", seq.Retry)
	}
	g := seq.Steps[0]
	if g.Retry.Retries() != 1 || len(g.Retry.Before()) != 1 || len(steps.Children(g)) != 2 {
		t.Errorf("group retry = %+v, want 1 retry and one before_retry step", g.Retry)
	}
	// The before_retry steps get the sequence's device like any other.
	var to []string
	steps.Walk(seq, func(s *steps.Step) {
		if s.Kind == steps.KindSend {
			to = append(to, s.To)
		}
	})
	if strings.Join(to, ",") != "console,console,console" {
		t.Errorf("devices of the sends = %v, want console for all three", to)
	}
	if n, _ := steps.Executions(seq); n != 11 {
		t.Errorf("Executions = %d, want 11: 3 attempts of (2 of the group's, 1 before its retry), 2 before the sequence's", n)
	}
	plain, err := steps.Parse("p.yaml", []byte("steps: [{send: x}]\n"), steps.LoadOptions{})
	if err != nil || plain.Retry != nil {
		t.Errorf("a sequence without retries: Retry = %v, %v; want nil", plain.Retry, err)
	}
}

func TestRetryErrors(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"too many", "retries: 21\nsteps: [{send: x}]\n", "r.yaml:1:10: retries must be a whole number from 0 to 20, found 21"},
		{"negative", "steps:\n  - group: g\n    retries: -1\n    steps: [{send: x}]\n", "r.yaml:3:14: retries must be a whole number from 0 to 20"},
		{"before_retry without retries", "steps:\n  - group: g\n    before_retry: [{send: r}]\n    steps: [{send: x}]\n",
			"r.yaml:2:5: before_retry: runs before a retry, but this group has no retries: add retries: N"},
		{"inside a repeat", "steps:\n  - repeat: 2\n    steps:\n      - group: g\n        retries: 1\n        steps: [{send: x}]\n",
			"r.yaml:5:18: retries: is refused inside a repeat"},
		{"before_retry sees no variable of the attempt", "retries: 1\nbefore_retry: [{send: '${v}'}]\nsteps:\n  - set: {v: 1}\n",
			`r.yaml:2:16: variable "v" is not defined here`},
		{"not a list", "retries: 1\nbefore_retry: reboot\nsteps: [{send: x}]\n", "r.yaml:2:15: before_retry must be a list of steps"},
		{"on a repeat", "steps:\n  - repeat: 2\n    retries: 1\n    steps: [{send: x}]\n", `r.yaml:3:5: unknown key "retries" in a repeat step`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := steps.Parse("r.yaml", []byte(tt.src), steps.LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error = %v, want %q", err, tt.want)
			}
		})
	}
}

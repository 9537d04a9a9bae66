package steps

import "testing"

func TestCounted(t *testing.T) {
	tests := []struct {
		name              string
		written, executed int
		want              string
	}{
		{"one step", 1, 1, "1 step"},
		{"no repeats", 18, 18, "18 steps"},
		{"repeats", 18, 42, "18 steps, 42 executions"},
		{"a run that stopped early", 3, 1, "3 steps"},
		{"event file older than the count", 0, 5, "5 steps"},
		{"nothing", 0, 0, "0 steps"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Counted(tt.written, tt.executed); got != tt.want {
				t.Errorf("Counted(%d, %d) = %q, want %q", tt.written, tt.executed, got, tt.want)
			}
		})
	}
}

func TestCountedPlan(t *testing.T) {
	tests := []struct {
		name, src, want string
	}{
		{"plain", "steps:\n  - delay: 1ms\n", "1 step"},
		{"groups are not steps", "steps:\n  - group: g\n    steps:\n      - delay: 1ms\n      - delay: 1ms\n", "2 steps"},
		{"repeats multiply executions", "steps:\n  - repeat: {count: 3}\n    steps:\n      - delay: 1ms\nfinally:\n  - delay: 1ms\n", "2 steps, up to 4 executions"},
		{"time bounds a repeat", "steps:\n  - repeat: {for: 1s}\n    steps:\n      - delay: 1ms\n", "1 step, executions bounded by time"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seq, err := Parse("seq.yaml", []byte(tt.src), LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if got := CountedPlan(seq); got != tt.want {
				t.Errorf("CountedPlan = %q, want %q", got, tt.want)
			}
		})
	}
}

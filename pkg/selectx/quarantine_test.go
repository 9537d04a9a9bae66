package selectx_test

import (
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/selectx"
)

func TestQuarantineMatches(t *testing.T) {
	q, err := selectx.ParseQuarantine("q.yaml", []byte(`
- name: flash*
  reason: "flaky, #123"
- name: boot[baud=9600,fw=2.4.1]
  reason: the old firmware hangs at 9600
- name: camera
  reason: no camera on bench-2
  benches: [bench-2]
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, bench, want string
	}{
		{"flash-erase", "", "quarantined: flaky, #123"},
		{"boot[baud=9600,fw=2.4.1]", "", "quarantined: the old firmware hangs at 9600"},
		{"boot[baud=9600,fw=2.5.0]", "", ""},
		{"camera", "bench-1", ""},
		{"camera", "bench-2", "quarantined: no camera on bench-2"},
		{"boot", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name+"@"+tt.bench, func(t *testing.T) {
			got := ""
			if e := q.Lookup(tt.name, tt.bench); e != nil {
				got = e.Why()
			}
			if got != tt.want {
				t.Errorf("Lookup(%q, %q) = %q, want %q", tt.name, tt.bench, got, tt.want)
			}
		})
	}
}

func TestQuarantineErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"not a list", "name: boot\n", "q.yaml:1:1: a quarantine list must be a list"},
		{"no reason", "- name: boot\n", "q.yaml:1:3: the entry for boot has no reason"},
		{"no name", "- reason: flaky\n", "q.yaml:1:3: the entry has no name"},
		{"unknown key", "- name: boot\n  reason: x\n  bench: [a]\n", `q.yaml:3:3: unknown key "bench"`},
		{"bad glob", "- name: \"boot[\"\n  reason: x\n", `q.yaml:1:9: name "boot[" is not a valid glob`},
		{"benches not a list", "- name: boot\n  reason: x\n  benches: a\n", "q.yaml:3:12: benches must be a list"},
		{"bad YAML", "- name: [\n", "q.yaml:1:1: invalid YAML"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := selectx.ParseQuarantine("q.yaml", []byte(tt.src))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
	if q, err := selectx.ParseQuarantine("q.yaml", nil); err != nil || len(q.Entries) != 0 {
		t.Errorf("an empty file: %v, %v; want an empty list", q, err)
	}
}

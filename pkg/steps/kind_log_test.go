package steps

import (
	"strings"
	"testing"
)

func TestLogStep(t *testing.T) {
	seq, err := Parse("log.yaml", []byte("name: l\nvars: {fw: 1}\nsteps:\n  - log: firmware ${fw} booted\n  - log: plain\n    name: checkpoint\n"), LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first := seq.Steps[0]
	a, ok := first.Args.(*LogArgs)
	if first.Kind != KindLog || !ok || a.Text.Raw != "firmware ${fw} booted" {
		t.Fatalf("log step decoded as %s with %#v", first.Kind, first.Args)
	}
	if got := first.Title(); got != "firmware ${fw} booted" {
		t.Errorf("title %q, want the line as written", got)
	}
	if got := seq.Steps[1].Title(); got != "checkpoint" {
		t.Errorf("a named log step's title is %q, want its name", got)
	}

	for _, tt := range []struct{ name, src, want string }{
		{"undefined variable", "steps:\n  - log: ${nope}\n", `log.yaml:2:5: variable "nope" is not defined here`},
		{"not text", "steps:\n  - log: {a: 1}\n", "log.yaml:2:10: log must be"},
		{"bad reference", "steps:\n  - log: ${\n", "log.yaml:2:10: log: unclosed ${"},
		{"unknown key", "steps:\n  - log: hi\n    to: dut\n", `log.yaml:3:5: unknown key "to" in a log step`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("log.yaml", []byte(tt.src), LoadOptions{})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

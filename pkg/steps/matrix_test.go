package steps_test

import (
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/steps"
)

// caseNames loads src and returns the names of its top-level steps.
func caseNames(t *testing.T, src string) []string {
	t.Helper()
	seq, err := steps.Parse("m.yaml", []byte(src), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range seq.Steps {
		names = append(names, s.Name)
	}
	return names
}

func TestMatrixCases(t *testing.T) {
	tests := []struct {
		name, matrix string
		want         []string
	}{
		{"every combination, first key slowest", `{a: [1, 2], b: [x, y]}`,
			[]string{"g[a=1,b=x]", "g[a=1,b=y]", "g[a=2,b=x]", "g[a=2,b=y]"}},
		{"exclude", `{a: [1, 2], b: [x, y], exclude: [{a: 1, b: y}]}`,
			[]string{"g[a=1,b=x]", "g[a=2,b=x]", "g[a=2,b=y]"}},
		{"exclude by one key", `{a: [1, 2], b: [x, y], exclude: [{b: y}]}`,
			[]string{"g[a=1,b=x]", "g[a=2,b=x]"}},
		{"include adds a key where it matches", `{a: [1, 2], include: [{a: 2, c: z}]}`,
			[]string{"g[a=1]", "g[a=2,c=z]"}},
		{"include adds to every case when it names no matrix key", `{a: [1, 2], include: [{c: z}]}`,
			[]string{"g[a=1,c=z]", "g[a=2,c=z]"}},
		{"include that matches none is a case", `{a: [1, 2], include: [{a: 3, c: z}]}`,
			[]string{"g[a=1]", "g[a=2]", "g[a=3,c=z]"}},
		{"include never changes a matrix value", `{a: [1], b: [x], include: [{a: 1, b: y}]}`,
			[]string{"g[a=1,b=x]", "g[a=1,b=y]"}},
		{"values as written", `{fw: ["2.4.1"], on: [true], hex: [0x10]}`,
			[]string{"g[fw=2.4.1,on=true,hex=0x10]"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := caseNames(t, "steps:\n  - group: g\n    matrix: "+tt.matrix+"\n    steps: [{log: hi}]\n")
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("cases %v, want %v", got, tt.want)
			}
		})
	}
}

func TestMatrixValuesAreVariables(t *testing.T) {
	seq, err := steps.Parse("m.yaml", []byte(`
name: boot
matrix: {fw: ["2.4.1"]}
steps:
  - group: g
    matrix: {baud: [9600]}
    steps:
      - send: "echo ${fw} ${baud}"
      - assert: baud == 9600 && fw == "2.4.1"
finally:
  - log: last ${fw}
`), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	outer := seq.Steps[0]
	if outer.Name != "boot[fw=2.4.1]" || len(outer.Case) != 1 || outer.Case[0].Value != "2.4.1" {
		t.Fatalf("the sequence's case: %q %+v", outer.Name, outer.Case)
	}
	inner := outer.Steps[0]
	if inner.Name != "g[baud=9600]" || inner.Case[0].Value != 9600 {
		t.Fatalf("the group's case: %q %+v", inner.Name, inner.Case)
	}
	if len(seq.Finally) != 1 {
		t.Errorf("finally steps: %d, want 1, run once after the cases", len(seq.Finally))
	}
}

func TestMatrixErrors(t *testing.T) {
	tests := []struct{ name, src, want string }{
		{"not a mapping", "matrix: [1]\nsteps: [{log: x}]\n", "m.yaml:1:9: matrix must map names to lists of values"},
		{"a key that is no name", "matrix: {1a: [1]}\nsteps: [{log: x}]\n", `m.yaml:1:10: matrix key "1a" must be letters`},
		{"no values", "matrix: {a: []}\nsteps: [{log: x}]\n", "m.yaml:1:13: matrix key a must have a list of one or more values"},
		{"a value that is a list", "matrix: {a: [[1]]}\nsteps: [{log: x}]\n", "m.yaml:1:14: matrix value of a must be text, a number or a boolean"},
		{"no keys", "matrix: {}\nsteps: [{log: x}]\n", "m.yaml:1:9: the matrix has no keys"},
		{"too many cases", "matrix: {a: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17], b: [1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17]}\nsteps: [{log: x}]\n", "more than 256 cases"},
		{"a key of the matrix around", "matrix: {a: [1]}\nsteps:\n  - group: g\n    matrix: {a: [2]}\n    steps: [{log: x}]\n", "m.yaml:4:14: matrix key a is also a key of a matrix around this one"},
		{"a value used outside its group", "steps:\n  - group: g\n    matrix: {a: [1]}\n    steps: [{log: x}]\n  - log: ${a}\n", ""},
		{"a tag listed twice", "tags: [a, a]\nsteps: [{log: x}]\n", `m.yaml:1:11: tag "a" is listed twice`},
		{"tags not a list", "tags: smoke\nsteps: [{log: x}]\n", "m.yaml:1:7: tags must be a list of names"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := steps.Parse("m.yaml", []byte(tt.src), steps.LoadOptions{})
			if tt.want == "" {
				if err != nil {
					t.Errorf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}

func TestDeselectMarksCopies(t *testing.T) {
	seq, err := steps.Parse("m.yaml", []byte(`
tags: [all]
steps:
  - group: outer
    tags: [a]
    steps:
      - group: inner
        tags: [b]
        steps: [{log: x}]
  - group: other
    steps: [{log: y}]
`), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	marked := steps.Deselect(seq, func(c steps.Selected) string {
		if c.Step == nil {
			return ""
		}
		seen = append(seen, strings.Join(c.Path, "/")+":"+strings.Join(c.Tags, ","))
		if c.Step.Name == "inner" {
			return "not today"
		}
		return ""
	})
	if got := strings.Join(seen, " "); got != "outer:a,all outer/inner:b,a,all other:all" {
		t.Errorf("asked about %s", got)
	}
	if marked == seq || marked.Steps[0].Steps[0].Skip != "not today" {
		t.Fatalf("inner not marked on a copy: %+v", marked.Steps[0].Steps[0])
	}
	if seq.Steps[0].Steps[0].Skip != "" {
		t.Error("Deselect changed the sequence it was given")
	}
	if marked.Steps[1] != seq.Steps[1] {
		t.Error("a group nothing marked was copied")
	}
	if same := steps.Deselect(seq, func(steps.Selected) string { return "" }); same != seq {
		t.Error("Deselect with nothing to mark made a copy")
	}
	if whole := steps.Deselect(seq, func(c steps.Selected) string { return "off" }); whole.Skip != "off" || seq.Skip != "" {
		t.Error("the sequence itself is not marked on a copy")
	}
}

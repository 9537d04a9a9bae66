package mcpserver

import (
	"testing"

	"github.com/hilrun/hilrun/pkg/results"
)

func TestNullField(t *testing.T) {
	type inner struct {
		List []string `json:"list"`
		Opt  []string `json:"opt,omitempty"`
	}
	type base struct {
		Tags []string `json:"tags"`
	}
	type outer struct {
		base
		Name   string            `json:"name"`
		Items  []inner           `json:"items"`
		Ptr    *inner            `json:"ptr,omitempty"`
		Map    map[string]string `json:"map"`
		Any    any               `json:"any"`
		hidden []string          // unexported: left out of JSON
	}
	ok := outer{base: base{Tags: []string{}}, Items: []inner{{List: []string{}}}, Map: map[string]string{}}
	_ = ok.hidden
	for name, tc := range map[string]struct {
		v    any
		want string
	}{
		"whole":                   {ok, ""},
		"pointer to it":           {&ok, ""},
		"nil in an embedded":      {outer{Items: []inner{}, Map: map[string]string{}}, ".tags"},
		"nil in a list element":   {outer{base: base{Tags: []string{}}, Items: []inner{{List: []string{}}, {}}, Map: map[string]string{}}, ".items[1].list"},
		"nil map":                 {outer{base: base{Tags: []string{}}, Items: []inner{}}, ".map"},
		"nil in an optional ptr":  {outer{base: base{Tags: []string{}}, Items: []inner{}, Map: map[string]string{}, Ptr: &inner{}}, ".ptr.list"},
		"nil result":              {nil, ""},
		"a sequence result":       {sequenceResult{Steps: []results.Step{}, LogResources: []string{}}, ""},
		"a sequence result's nil": {sequenceResult{LogResources: []string{}}, ".steps"},
	} {
		t.Run(name, func(t *testing.T) {
			if got := nullField(tc.v); got != tc.want {
				t.Errorf("nullField = %q, want %q", got, tc.want)
			}
		})
	}
}

func BenchmarkNullField(b *testing.B) {
	out := sequenceResult{LogResources: []string{}, Steps: make([]results.Step, 1000)}
	for i := range out.Steps {
		out.Steps[i].Data = map[string]any{"bytes": 10, "cursor": 123}
	}
	out.Steps[10].Repeat = &results.Repeat{Failures: []results.Iteration{{}}}
	for i := 0; i < b.N; i++ {
		if p := nullField(out); p != "" {
			b.Fatal(p)
		}
	}
}

package runner_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
)

// TestCaseTagsAndParams runs a 2x2 matrix of a tagged group in a tagged
// sequence: each case carries its tags as -m matches them and its values
// in the order written; a group inside a case has its own tags first;
// a case that did not run keeps both.
func TestCaseTagsAndParams(t *testing.T) {
	src := withPrompt(`tags: [hw]
steps:
  - group: echo
    tags: [slow]
    matrix:
      fw: ["2.5.0", "2.4.1"]
      baud: [115200, 9600]
    steps:
      - send: echo ${fw} at ${baud}
        expect: ${fw} at ${baud}
      - group: adc
        tags: [adc]
        steps: [{send: echo adc}]
  - send: version
`)
	res := run(t, context.Background(), load(t, src), newDevice(shell), nil)
	if res.Status != runner.Passed || strings.Join(res.Tags, ",") != "hw" {
		t.Fatalf("status %s, tags %v; want a pass tagged hw", res.Status, res.Tags)
	}
	var got []string
	for _, st := range res.Steps {
		if st.Kind != "group" {
			if st.Tags != nil || st.Params != nil {
				t.Errorf("step %s %s carries tags %v, params %v", st.Path, st.Kind, st.Tags, st.Params)
			}
			continue
		}
		b, err := json.Marshal(st.Params)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%s %s %v %s", st.Path, st.Name, st.Tags, b))
	}
	want := []string{
		`0.1 adc [adc slow hw] null`,
		`0 echo[fw=2.5.0,baud=115200] [slow hw] {"fw":"2.5.0","baud":115200}`,
		`1.1 adc [adc slow hw] null`,
		`1 echo[fw=2.5.0,baud=9600] [slow hw] {"fw":"2.5.0","baud":9600}`,
		`2.1 adc [adc slow hw] null`,
		`2 echo[fw=2.4.1,baud=115200] [slow hw] {"fw":"2.4.1","baud":115200}`,
		`3.1 adc [adc slow hw] null`,
		`3 echo[fw=2.4.1,baud=9600] [slow hw] {"fw":"2.4.1","baud":9600}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("groups:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// A case that did not run (after an error) keeps its tags and values.
	dev := newDevice(shell)
	res = run(t, context.Background(), load(t, withPrompt(`steps:
  - send: panic
    expect: never
    timeout: 1ms
  - group: g
    matrix: {n: [1]}
    steps: [{send: x}]
`)), dev, nil)
	found := false
	for _, st := range res.Steps {
		if st.Path == "1" {
			found = true
			if st.Status != runner.Skipped || len(st.Params) != 1 || st.Params[0].Key != "n" {
				t.Errorf("the case that did not run: status %s, params %v", st.Status, st.Params)
			}
		}
	}
	if !found {
		t.Errorf("no result for the case that did not run: %s", statuses(res))
	}
}

// TestParamsJSON checks that Params keep their order through JSON, and
// that a value JSON cannot hold is a string.
func TestParamsJSON(t *testing.T) {
	p := runner.Params{{Key: "z", Value: "a"}, {Key: "a", Value: 2.5}, {Key: "m", Value: true}}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != `{"z":"a","a":2.5,"m":true}` {
		t.Errorf("marshal = %s", b)
	}
	var back runner.Params
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if len(back) != 3 || back[0].Key != "z" || back[1].Key != "a" || fmt.Sprint(back[1].Value) != "2.5" || back[2].Value != true {
		t.Errorf("unmarshal = %#v", back)
	}
	if err := json.Unmarshal([]byte(`[1]`), &back); err == nil {
		t.Error("a list reads as params")
	}
}

package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// matrixRun is a sequence tagged hw whose group echo, tagged slow, is a
// 2x2 matrix over fw and baud, keys written in that order.
func matrixRun() runner.SequenceResult {
	seq := runner.SequenceResult{Name: "boot-matrix", File: "seq/matrix.yaml", Status: runner.Passed, StartedAt: base, Duration: time.Second,
		Tags: []string{"hw"}}
	i := 0
	for _, fw := range []string{"2.5.0", "2.4.1"} {
		for _, baud := range []float64{115200, 9600} {
			path := fmt.Sprint(i)
			name := fmt.Sprintf("echo[fw=%s,baud=%v]", fw, baud)
			seq.Steps = append(seq.Steps,
				runner.StepResult{Index: 2 * i, Path: path + ".0", Kind: "send", Name: "echo " + fw, Group: name, Status: runner.Passed},
				runner.StepResult{Index: 2*i + 1, Path: path, Kind: "group", Name: name, Group: name, Status: runner.Passed, Tags: []string{"slow", "hw"},
					Params: runner.Params{{Key: "fw", Value: fw}, {Key: "baud", Value: baud}}})
			i++
		}
	}
	return seq
}

// TestJSONCaseTagsAndParams checks that the JSON report gives the
// sequence its tags and each case of a 2x2 matrix its tags and its
// values, the keys in the order written.
func TestJSONCaseTagsAndParams(t *testing.T) {
	var b bytes.Buffer
	if err := WriteJSON(&b, eventFile(t, []runner.SequenceResult{matrixRun()}), results.Options{}); err != nil {
		t.Fatal(err)
	}
	golden(t, "report_cases.golden.json", b.Bytes())
	var doc struct {
		Sequences []struct {
			Tags  []string
			Steps []struct {
				Path, Kind string
				Tags       []string
				Params     json.RawMessage
			}
		}
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Sequences[0]
	if strings.Join(s.Tags, ",") != "hw" {
		t.Errorf("the sequence's tags are %v, want [hw]", s.Tags)
	}
	var cases []string
	for _, st := range s.Steps {
		if st.Kind != "group" {
			if st.Tags != nil || st.Params != nil {
				t.Errorf("step %s carries tags or params", st.Path)
			}
			continue
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, st.Params); err != nil {
			t.Fatal(err)
		}
		cases = append(cases, fmt.Sprintf("%s %v %s", st.Path, st.Tags, compact.String()))
	}
	want := []string{
		`0 [slow hw] {"fw":"2.5.0","baud":115200}`,
		`1 [slow hw] {"fw":"2.5.0","baud":9600}`,
		`2 [slow hw] {"fw":"2.4.1","baud":115200}`,
		`3 [slow hw] {"fw":"2.4.1","baud":9600}`,
	}
	if strings.Join(cases, "\n") != strings.Join(want, "\n") {
		t.Errorf("cases:\n%s\nwant:\n%s", strings.Join(cases, "\n"), strings.Join(want, "\n"))
	}
}

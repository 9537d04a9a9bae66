package steps_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/hilrun/hilrun/pkg/steps"
)

// FuzzParseValue feeds arbitrary JSON to ParseValue. Whatever the input,
// it returns a sequence or an ErrorList whose entries all name the value
// and no line, in bounded time and memory, and never panics; and a text
// that Parse reads as a sequence, ParseValue reads as the same sequence.
// Its seeds are the cases of TestParseValueReadsAsTextDoes and the
// repository's JSON sequences and schema test files.
func FuzzParseValue(f *testing.F) {
	for _, tc := range sameAsText {
		f.Add([]byte(tc.json), false)
	}
	addRepoFiles(f, func(file string) bool { return !isBench(file) },
		"../../sequences/*/*.json", "../../testdata/schema/*/*.json")
	f.Fuzz(func(t *testing.T, data []byte, _ bool) {
		if !json.Valid(data) {
			return
		}
		var seq *steps.Sequence
		var err error
		bounded(t, len(data), func() { seq, err = steps.ParseValue("fuzz", json.RawMessage(data), steps.LoadOptions{}) })
		if err != nil {
			var el steps.ErrorList
			if !errors.As(err, &el) || len(el) == 0 {
				t.Fatalf("error is not an ErrorList: %v", err)
			}
			for _, e := range el {
				if e.Pos.File != "fuzz" || e.Pos.Line != 0 || e.Msg == "" {
					t.Fatalf("error not placed by a pointer: %#v", e)
				}
			}
		}
		text, terr := steps.Parse("<fuzz>.json", data, steps.LoadOptions{})
		if terr != nil {
			return
		}
		if err != nil {
			t.Fatalf("Parse reads the text, ParseValue does not: %v", err)
		}
		seq.Name = text.Name // "<fuzz>" and "fuzz" when the value has none
		if a, b := dump(text), dump(seq); a != b {
			t.Fatalf("ParseValue differs from Parse:\n text: %s\nvalue: %s", a, b)
		}
	})
}

package steps_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hilrun/hilrun/pkg/steps"
)

// FuzzParse feeds arbitrary bytes to the loader: whatever the input, it
// returns a sequence or an ErrorList whose entries all have a position, and
// never panics.
func FuzzParse(f *testing.F) {
	for _, glob := range []string{"../../sequences/*/*", "../../testdata/schema/*/*"} {
		files, _ := filepath.Glob(glob)
		for _, file := range files {
			if data, err := os.ReadFile(file); err == nil {
				f.Add(filepath.Ext(file), data)
			}
		}
	}
	f.Add(".yaml", []byte("steps: [{send: '${'}]"))
	f.Fuzz(func(t *testing.T, ext string, data []byte) {
		seq, err := steps.Parse("fuzz"+ext, data, steps.LoadOptions{})
		if err == nil {
			if seq == nil {
				t.Fatal("nil sequence without an error")
			}
			return
		}
		var el steps.ErrorList
		if !errors.As(err, &el) || len(el) == 0 {
			t.Fatalf("error is not a positioned ErrorList: %v", err)
		}
		for _, e := range el {
			if e.Pos.Line < 1 || e.Pos.Col < 1 {
				t.Fatalf("error without a position: %v", e)
			}
		}
	})
}

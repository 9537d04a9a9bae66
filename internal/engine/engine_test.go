package engine

import (
	"slices"
	"testing"

	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

// The loader checks reset_sequence names against its own list, so that a
// typo is a FILE:LINE:COL error before anything opens; serialx plays them.
// The two lists must agree.
func TestResetSequenceNamesAgree(t *testing.T) {
	var names []string
	for _, s := range serialx.ResetSequences() {
		names = append(names, s.Name)
	}
	want := slices.Sorted(slices.Values(steps.ResetSequences))
	if !slices.Equal(names, want) {
		t.Fatalf("serialx plays %v, the loader accepts %v", names, want)
	}
}

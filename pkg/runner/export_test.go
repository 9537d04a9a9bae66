package runner

import (
	"io"

	"github.com/hilrun/hilrun/pkg/steps"
)

// NewLineWriterForTest exposes lineWriter to the external tests.
func NewLineWriterForTest(fn func(string)) io.Writer { return &lineWriter{fn: fn} }

// LeafRunners are the kinds leafRunners has an entry for, the kind files'
// init included.
func LeafRunners() map[steps.Kind]bool {
	m := map[steps.Kind]bool{}
	for k := range leafRunners {
		m[k] = true
	}
	return m
}

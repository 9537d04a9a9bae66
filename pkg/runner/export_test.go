package runner

import "io"

// NewLineWriterForTest exposes lineWriter to the external tests.
func NewLineWriterForTest(fn func(string)) io.Writer { return &lineWriter{fn: fn} }

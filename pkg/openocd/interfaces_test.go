package openocd

import "github.com/hilrun/hilrun/pkg/runner"

// The runner's views of a debug probe session and of symbol lookup.
var (
	_ runner.Debugger = (*Session)(nil)
)

// A CommandError fails a step rather than erroring it: the runner looks
// for this method.
var _ interface{ TestFailure() bool } = (*CommandError)(nil)

package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// Exit codes of hilrun.
const (
	ExitPassed      = 0   // every sequence passed
	ExitFailed      = 1   // a step failed: the device misbehaved
	ExitInvalid     = 2   // invalid input: usage or sequence errors; nothing was touched
	ExitInfra       = 3   // a port or tool could not be reached, or vanished
	ExitInterrupted = 130 // SIGINT or SIGTERM
)

// exitError carries an exit code through cobra's error return.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string {
	if e.err == nil {
		return fmt.Sprintf("exit %d", e.code)
	}
	return e.err.Error()
}

func (e *exitError) Unwrap() error { return e.err }

// invalid marks err as invalid input (exit 2).
func invalid(err error) error { return &exitError{code: ExitInvalid, err: err} }

// infra marks err as an infrastructure error (exit 3).
func infra(err error) error { return &exitError{code: ExitInfra, err: err} }

// silent ends with code without printing anything more.
func silent(code int) error { return &exitError{code: code} }

// exitCode maps an error returned by a command to hilrun's exit code. This is
// the one place that decides it.
func exitCode(err error) int {
	var ee *exitError
	var el steps.ErrorList
	switch {
	case err == nil:
		return ExitPassed
	case errors.As(err, &ee):
		return ee.code
	case errors.As(err, &el):
		return ExitInvalid
	case errors.Is(err, context.Canceled):
		return ExitInterrupted
	}
	// Commands classify every error they return; what is left is cobra's
	// own complaint about the command line.
	return ExitInvalid
}

// resultCode is the exit code for a set of sequence results: the most
// serious outcome wins.
func resultCode(results []runner.SequenceResult) int {
	code := ExitPassed
	rank := map[int]int{ExitPassed: 0, ExitFailed: 1, ExitInfra: 2, ExitInterrupted: 3}
	for _, r := range results {
		c := ExitPassed
		switch r.Status {
		case runner.Failed:
			c = ExitFailed
		case runner.Errored:
			c = ExitInfra
		case runner.Interrupted:
			c = ExitInterrupted
		}
		if rank[c] > rank[code] {
			code = c
		}
	}
	return code
}

// interrupted marks err as an interruption (exit 130).
func interrupted(err error) error { return &exitError{code: ExitInterrupted, err: err} }

package runner

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// bufferFailure returns the step failure for err when it says a regexp
// match may be longer than what device dev's console keeps
// (*stream.BufferError): it names the size kept and the devices: key that
// raises it. ok is false for any other error.
func bufferFailure(err error, dev string, c Console) (_ error, ok bool) {
	var be *stream.BufferError
	if !errors.As(err, &be) {
		return nil, false
	}
	msg := fmt.Sprintf("a match of /%s/ may be longer than the %s of output hilrun keeps for %s: it may have begun at offset %d, before the oldest byte kept",
		be.Pattern, stream.FormatSize(be.Capacity), dev, be.Start)
	if more := min(2*be.Capacity, steps.MaxBuffer); more > be.Capacity {
		msg += fmt.Sprintf("; raise it with buffer: under devices: %s (such as buffer: %s, at most %s)",
			dev, strings.ReplaceAll(stream.FormatSize(more), " ", ""), strings.ReplaceAll(stream.FormatSize(steps.MaxBuffer), " ", ""))
	}
	return &stepError{msg: msg, expected: "/" + be.Pattern.String() + "/", received: stream.Printable(c.Tail(10, 2048))}, true
}

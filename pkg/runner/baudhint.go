package runner

import (
	"fmt"
	"unicode/utf8"

	"github.com/hilrun/hilrun/pkg/steps"
)

// baudHint returns a hint for an expect that timed out on output that is
// mostly not text, which is what a console at the wrong baud rate reads,
// or "". tail is the end of what the device sent; dev may be nil.
func baudHint(tail []byte, dev *steps.Device) string {
	if len(tail) < 16 {
		return ""
	}
	bad := 0
	for p := tail; len(p) > 0; {
		r, n := utf8.DecodeRune(p)
		p = p[n:]
		switch {
		case r == utf8.RuneError && n <= 1, r < 0x20 && r != '\r' && r != '\n' && r != '\t', r == 0x7f:
			bad += n
		}
	}
	if 2*bad < len(tail) {
		return ""
	}
	hint := fmt.Sprintf(" (%d of the last %d bytes received are not text, as a console at the wrong baud rate reads", bad, len(tail))
	if dev != nil && dev.Baud > 0 {
		hint += fmt.Sprintf(": is baud %d the device's?", dev.Baud)
	}
	return hint + ")"
}

package runner

import (
	"strings"
	"testing"
)

// A log line names its step on one line, cut to a length a report's
// table can show; the step's message keeps all of it.
func TestLogName(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"firmware 2.4.1 booted", "firmware 2.4.1 booted"},
		{"two\r\nlines\nhere", "two lines here"},
		{strings.Repeat("x", 250), strings.Repeat("x", 199) + "…"},
	} {
		if got := logName(tt.in); got != tt.want {
			t.Errorf("logName(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestSwitchGivenASeparateValue: --recover false reads false as a file
// (or, for mcp, a command) unless hilrun catches it; it says how to write
// it, before anything runs.
func TestSwitchGivenASeparateValue(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // "" for no such error
	}{
		{[]string{"run", "--sim", "--recover", "false", "seq.yaml"}, "--recover=false"},
		{[]string{"mcp", "--recover", "false"}, "--recover=false"},
		{[]string{"run", "-v", "true", "seq.yaml"}, "--verbose=true"},
		{[]string{"run", "--recover=false", "false.yaml"}, ""},
		{[]string{"run", "-k", "false", "seq.yaml"}, ""},
		{[]string{"run", "--var", "--recover", "false", "seq.yaml"}, ""},
		{[]string{"run", "--", "--recover", "false"}, ""},
		{[]string{"pio", "search-libraries", "--json", "1"}, ""},
		{[]string{"run", "-v", "t", "seq.yaml"}, ""},
		{[]string{"no-such-command", "--recover", "false"}, ""},
	} {
		ios := &IO{In: strings.NewReader(""), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}}
		err := boolFlagValue(NewRoot(ios), tc.args)
		switch {
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want) || exitCode(err) != ExitInvalid):
			t.Errorf("%q: %v; want a usage error saying to write %s", tc.args, err, tc.want)
		case tc.want == "" && err != nil:
			t.Errorf("%q: %v, though no switch was given a separate value", tc.args, err)
		}
	}
	// Through the command line: exit 2, the message on standard error.
	var out, errOut bytes.Buffer
	if code := Main([]string{"run", "--recover", "false", "seq.yaml"}, strings.NewReader(""), &out, &errOut); code != ExitInvalid || !strings.Contains(errOut.String(), "a switch takes its value after '='") {
		t.Errorf("hilrun run --recover false seq.yaml: exit %d, %q", code, errOut.String())
	}
}

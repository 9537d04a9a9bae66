package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestSwitchGivenASeparateValue: --recover false reads false as a file
// (or, for mcp, a command) unless hilrun catches it; it says how to write
// it, exit 2, before anything runs.
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
	} {
		var out, errOut bytes.Buffer
		code := Main(tc.args, strings.NewReader(""), &out, &errOut)
		got := strings.Contains(errOut.String(), "a switch takes its value after '='")
		switch {
		case tc.want != "" && (code != ExitInvalid || !got || !strings.Contains(errOut.String(), tc.want)):
			t.Errorf("%q: exit %d, %q; want exit 2 saying to write %s", tc.args, code, errOut.String(), tc.want)
		case tc.want == "" && got:
			t.Errorf("%q: %q, though no switch was given a separate value", tc.args, errOut.String())
		}
	}
}

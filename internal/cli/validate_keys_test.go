package cli_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestValidateNamesWhere: hilrun validate refuses a wrong retries,
// before_retry, measure, tags, matrix (include and exclude), secrets (in a
// sequence, a bench file and a pool file) and quarantine list with exit 2
// and the FILE:LINE:COL of what is wrong.
func TestValidateNamesWhere(t *testing.T) {
	bad := func(name string) string { return filepath.Join("..", "..", "testdata", "schema", "bad", name) }
	smoke := filepath.Join("..", "..", "sequences", "sim", "smoke.yaml")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{bad("retries-too-many.yaml")}, "retries-too-many.yaml:2:10: retries must be a whole number from 0 to 20"},
		{[]string{bad("before-retry-not-list.yaml")}, "before-retry-not-list.yaml:5:19: before_retry must be a list of steps"},
		{[]string{bad("measure-min-text.yaml")}, `measure-min-text.yaml:3:44: measure min must be a number`},
		{[]string{bad("tag-name.yaml")}, `tag-name.yaml:2:8: tag "a b"`},
		{[]string{bad("matrix-exclude-not-list.yaml")}, "matrix-exclude-not-list.yaml:6:16: matrix exclude must be a list of mappings"},
		{[]string{bad("secret-name.yaml")}, `secret-name.yaml:2:11: secret name "wifi-psk"`},
		{[]string{bad("secret-source.bench.yaml")}, "secret-source.bench.yaml:3:13: secret wifi_psk: a secret's source must be env:VARIABLE or file:PATH"},
		{[]string{bad("sim-and-secrets.pool.yaml")}, "sim-and-secrets.pool.yaml:3:5: bench a: give one of"},
		{[]string{"--sim", "--quarantine", bad("unknown-key.quarantine.yaml"), smoke}, `unknown-key.quarantine.yaml:4:3: unknown key "bench" in a quarantine entry`},
	} {
		t.Run(filepath.Base(tc.args[len(tc.args)-1]), func(t *testing.T) {
			code, stdout, stderr := hilrun(append([]string{"validate"}, tc.args...)...)
			if code != 2 || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want 2 and %q\n%s%s", code, tc.want, stdout, stderr)
			}
		})
	}
}

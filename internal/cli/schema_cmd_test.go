package cli_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	shipped "github.com/hilrun/hilrun"
)

// TestSchemaCommand: hilrun schema prints each file format's schema as
// shipped, and each holds the keys its files take: those of retries,
// measurements, tags, matrices, secrets and quarantine lists included.
func TestSchemaCommand(t *testing.T) {
	for _, tc := range []struct {
		flag   string
		schema []byte
		keys   []string
	}{
		{"", shipped.SequenceSchema, []string{`"secrets"`, `"retries"`, `"before_retry"`, `"measure"`, `"tags"`, `"matrix"`, `"include"`, `"exclude"`}},
		{"--bench", shipped.BenchSchema, []string{`"secrets"`}},
		{"--pool", shipped.PoolSchema, []string{`"secrets"`, `"benches"`}},
		{"--quarantine", shipped.QuarantineSchema, []string{`"name"`, `"reason"`, `"benches"`}},
	} {
		t.Run("schema "+tc.flag, func(t *testing.T) {
			args := []string{"schema"}
			if tc.flag != "" {
				args = append(args, tc.flag)
			}
			code, stdout, stderr := hilrun(args...)
			if code != 0 || !bytes.Equal([]byte(stdout), tc.schema) || !json.Valid([]byte(stdout)) {
				t.Fatalf("exit %d, %d bytes printed, %d shipped\n%s", code, len(stdout), len(tc.schema), stderr)
			}
			for _, k := range tc.keys {
				if !strings.Contains(stdout, k+": {") {
					t.Errorf("the schema has no property %s", k)
				}
			}
		})
	}
	if code, _, stderr := hilrun("schema", "--bench", "--quarantine"); code != 2 || !strings.Contains(stderr, "none of the others can be") {
		t.Errorf("two formats at once: exit %d\n%s", code, stderr)
	}
}

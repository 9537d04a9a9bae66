package cli_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// countSeq has 4 steps as written (the group and the repeat are not
// steps of their own); the repeat runs its 2 steps 3 times, so a run
// executes 1 + 6 + 1 = 8 of them.
const countSeq = `name: counted
vars: {x: 1}
steps:
  - assert: x == 1
  - repeat: {count: 3}
    steps:
      - group: inner
        steps:
          - assert: x == 1
      - assert: x == 1
finally:
  - assert: x == 1
`

// TestStepCountsAgree: validate, run --list, the run's console and its
// HTML report say the same number of steps, and name the executions
// apart.
func TestStepCountsAgree(t *testing.T) {
	dir := t.TempDir()
	seq := writeFile(t, dir, "counted.yaml", countSeq)
	html := filepath.Join(dir, "report.html")
	_, validated, _ := hilrun("validate", seq)
	_, listed, _ := hilrun("run", "--list", seq)
	code, ran, stderr := hilrun("run", "--html", html, seq)
	if code != 0 {
		t.Fatalf("run: exit %d\n%s\n%s", code, ran, stderr)
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, got, want string
	}{
		{"validate", validated, "ok (counted, 4 steps, up to 8 executions)"},
		{"run --list", listed, "counted (4 steps, up to 8 executions)"},
		{"run", ran, "PASSED counted: 4 steps, 8 executions, 8 passed, 0 failed"},
		{"html", htmlCounted(t, page), "4 steps, 8 executions"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !strings.Contains(tt.got, tt.want) {
				t.Errorf("says:\n%s\nwant %q", tt.got, tt.want)
			}
		})
	}
}

// htmlCounted is what the HTML report's data says of its sequence's steps.
func htmlCounted(t *testing.T, page []byte) string {
	t.Helper()
	data := []byte(htmlData(t, page))
	var doc struct {
		Sequences []struct{ Counted string }
	}
	if err := json.Unmarshal(data, &doc); err != nil || len(doc.Sequences) != 1 {
		t.Fatalf("the page's data: %v", err)
	}
	return doc.Sequences[0].Counted
}

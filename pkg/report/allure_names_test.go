package report

import (
	"context"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/gate/files"
)

// TestAllureNamesNumberedOnce: an Allure test case's name starts with the
// step's index, zero-padded as in the JUnit report so that names sort in
// the order the steps ran, and carries it once.
func TestAllureNamesNumberedOnce(t *testing.T) {
	dir := t.TempDir()
	events, _, _ := htmlFixture(t, dir)
	out := filepath.Join(dir, "allure-results")
	if err := WriteAllure(context.Background(), out, events, AllureOptions{Files: files.Anywhere(), Info: htmlInfo}); err != nil {
		t.Fatal(err)
	}
	res, _ := readAllure(t, out)
	index := regexp.MustCompile(`^(\d{2,}|finally\.\d+)(\.\d+)*$`)
	number := regexp.MustCompile(`^[\d.]+$`)
	for file, b := range res {
		var r allureResult
		if err := json.Unmarshal(b, &r); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		f := strings.Fields(r.Name)
		switch {
		case r.Name == interruptedCaseName || r.Name == "sequence" || r.Name == "setup":
		case len(f) < 2 || !index.MatchString(f[0]):
			t.Errorf("test case %q does not start with a zero-padded index", r.Name)
		case number.MatchString(f[1]):
			t.Errorf("test case %q is numbered twice", r.Name)
		}
	}
}

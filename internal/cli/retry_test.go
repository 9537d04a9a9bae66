package cli_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/internal/cli"
)

// htmlData is the data block of an HTML report, decoded.
func htmlData(t *testing.T, page []byte) string {
	t.Helper()
	m := regexp.MustCompile(`(?s)id="hilrun-data" data-encoding="gzip\+base64">(.*?)</script>`).FindSubmatch(page)
	if m == nil {
		t.Fatal("the page has no data block")
	}
	gz, err := gzip.NewReader(base64.NewDecoder(base64.StdEncoding, bytes.NewReader(m[1])))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestRetriesOnTheVirtualBoard runs sequences/sim/flaky.yaml, whose adc
// group passes on its third attempt, and a sequence that never passes,
// and checks every report: console, JSON, JUnit (against the schema),
// HTML and Allure.
func TestRetriesOnTheVirtualBoard(t *testing.T) {
	dir := t.TempDir()
	flaky, _ := filepath.Abs("../../sequences/sim/flaky.yaml")
	never := filepath.Join(dir, "never.yaml")
	if err := os.WriteFile(never, []byte(`name: never
devices: {console: {prompt: "sim> "}}
retries: 1
before_retry:
  - send: echo again
    expect: again
steps:
  - send: flaky never 9
    expect: OK never
`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := func(name string) string { return filepath.Join(dir, name) }
	code, stdout, stderr := hilrun("run", "--sim", "--junit", out("j.xml"), "--json", out("r.json"), "--html", out("r.html"), "--allure", out("allure"), flaky)
	if code != cli.ExitPassed {
		t.Fatalf("a flaky run passes: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		"↻ adc: attempt 1 of 3 failed",
		"↻ adc: attempt 2 of 3 failed",
		"↻ adc: flaky, passed on attempt 3 of 3",
		"PASSED flaky: flaky, passed after a retry;",
		"5 retried",
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the console does not say %q:\n%s", want, stdout)
		}
	}

	var doc struct {
		Passed, Flaky bool
		Sequences     []struct {
			Flaky  bool
			Counts struct{ Retried, Failed int }
			Steps  []struct {
				Path, Status string
				Attempt      int
				Flaky        bool
				Attempts     []struct {
					Attempt, Of    int
					Status, Output string
					Retried        bool
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(readFile(t, out("r.json"))), &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Sequences[0]
	if !doc.Passed || !doc.Flaky || !s.Flaky || s.Counts.Retried != 5 || s.Counts.Failed != 0 {
		t.Errorf("JSON: passed %v, flaky %v/%v, counts %+v", doc.Passed, doc.Flaky, s.Flaky, s.Counts)
	}
	attempts := map[int]bool{}
	for _, st := range s.Steps {
		if st.Path == "2.1" {
			attempts[st.Attempt] = true
		}
		if st.Path == "2" {
			if !st.Flaky || len(st.Attempts) != 3 || st.Attempts[0].Status != "failed" || !st.Attempts[0].Retried ||
				!strings.Contains(st.Attempts[0].Output, "FAIL adc") || st.Attempts[2].Status != "passed" || st.Attempts[2].Of != 3 {
				t.Errorf("JSON: the adc group = %+v", st)
			}
		}
	}
	if len(attempts) != 3 {
		t.Errorf("JSON: the adc step is listed in attempts %v, want 1, 2 and 3", attempts)
	}

	junit := readFile(t, out("j.xml"))
	checkJUnitSchema(t, out("j.xml"))
	if n := strings.Count(junit, "<flakyFailure "); n != 2 {
		t.Errorf("JUnit: %d flakyFailure elements, want 2 (one per failed attempt):\n%s", n, junit)
	}
	if !strings.Contains(junit, `failures="0" errors="0"`) || !strings.Contains(junit, `message="attempt 1 of 3: `) || strings.Contains(junit, "<failure") {
		t.Errorf("JUnit: the flaky case must pass, its attempts named:\n%s", junit)
	}
	if !strings.Contains(junit, "FAIL adc (call 2)") {
		t.Errorf("JUnit: an attempt's output is missing:\n%s", junit)
	}

	data := htmlData(t, []byte(readFile(t, out("r.html"))))
	if !strings.Contains(data, `"flaky":true`) || !strings.Contains(data, `"attempts":[`) {
		t.Errorf("HTML: no flaky mark or attempts in the data")
	}
	checkAllureAttempts(t, out("allure"))

	// --fail-on-flaky makes it a failure.
	if code, stdout, stderr := hilrun("run", "--sim", "--fail-on-flaky", flaky); code != cli.ExitFailed || !strings.Contains(stderr, "--fail-on-flaky: 1 sequence passed only after a retry: flaky") {
		t.Errorf("--fail-on-flaky: exit %d, want 1\n%s%s", code, stdout, stderr)
	}

	// A case that never passes fails with a rerunFailure per earlier
	// attempt.
	code, stdout, stderr = hilrun("run", "--sim", "--junit", out("never.xml"), never)
	if code != cli.ExitFailed {
		t.Fatalf("never: exit %d, want 1\n%s%s", code, stdout, stderr)
	}
	junit = readFile(t, out("never.xml"))
	checkJUnitSchema(t, out("never.xml"))
	if strings.Count(junit, "<rerunFailure ") != 1 || strings.Count(junit, "<failure ") != 1 || strings.Contains(junit, "<flaky") ||
		!strings.Contains(junit, `<testcase name="before_retry.0 send echo again"`) {
		t.Errorf("JUnit of a case that never passed:\n%s", junit)
	}
	if !strings.Contains(stdout, "↻ never: attempt 1 of 2 failed") {
		t.Errorf("the console does not show the sequence's attempt:\n%s", stdout)
	}

	// --retries retries a sequence that does not say retries:, and --list
	// says so.
	plain := filepath.Join(dir, "plain.yaml")
	if err := os.WriteFile(plain, []byte("devices: {console: {prompt: \"sim> \"}}\nsteps:\n  - send: flaky plain 1\n    expect: OK plain\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, stdout, stderr := hilrun("run", "--sim", "--retries", "1", plain); code != cli.ExitPassed {
		t.Errorf("--retries 1: exit %d, want 0\n%s%s", code, stdout, stderr)
	}
	if code, stdout, _ := hilrun("run", "--list", "--retries", "2", plain, flaky); code != cli.ExitPassed ||
		!strings.Contains(stdout, "plain (1 step) retries 2") || !strings.Contains(stdout, "group retries: adc 2") {
		t.Errorf("--list: exit %d\n%s", code, stdout)
	}
	if code, _, stderr := hilrun("run", "--sim", "--retries", "21", plain); code != cli.ExitInvalid || !strings.Contains(stderr, "--retries 21: want a whole number from 0 to 20") {
		t.Errorf("--retries 21: exit %d, want 2\n%s", code, stderr)
	}
}

// checkAllureAttempts checks the Allure results of sequences/sim/flaky.yaml:
// each attempt of the adc case is a result sharing its historyId, as Allure
// shows retries; the last is marked flaky.
func checkAllureAttempts(t *testing.T, dir string) {
	t.Helper()
	results, _ := filepath.Glob(filepath.Join(dir, "*-result.json"))
	var adc []string
	history := map[string]bool{}
	for _, f := range results {
		var r struct {
			Name, HistoryID, Status string
			StatusDetails           struct {
				Message string
				Flaky   bool
			}
		}
		if err := json.Unmarshal([]byte(readFile(t, f)), &r); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(r.Name, "group adc") {
			history[r.HistoryID] = true
			adc = append(adc, fmt.Sprintf("%s %t %s", r.Status, r.StatusDetails.Flaky, r.StatusDetails.Message))
		}
	}
	slices.Sort(adc)
	if len(history) != 1 || len(adc) != 3 || !strings.HasPrefix(adc[0], "failed false attempt 1 of 3: ") ||
		!strings.HasPrefix(adc[1], "failed false attempt 2 of 3: ") || adc[2] != "passed true flaky: passed on attempt 3 of 3" {
		t.Errorf("Allure: the adc case's results (%d histories) are %q, want its three attempts, the last flaky", len(history), adc)
	}
}

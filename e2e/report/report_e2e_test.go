//go:build unix

// Package reporte2e checks hilrun's HTML report and Allure results end to
// end: hilrun runs testdata/bench-demo.yaml against the virtual board
// (with OpenOCD and ffmpeg for its probe and camera), the HTML page is
// loaded in headless Chromium, and the Allure results are rendered by the
// real Allure 3 CLI from npm (this folder's package.json; `npm ci --prefix
// e2e/report`).
//
// TestHTMLMillionSteps (large_test.go) checks the page's bounds for a run of
// a million steps.
//
// Without chromium, openocd, ffmpeg, node or this folder's node_modules the
// tests skip, except under CI=true where they fail. `go test ./e2e/report
// -update` also writes docs/report.png, docs/reports.md's screenshot, from the
// page of that run. HILRUN_E2E_BIN=PATH tests that binary instead of
// building one.
package reporte2e

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/xml"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hilrun/hilrun/internal/cdp"
	"github.com/hilrun/hilrun/pkg/testenv"
)

var update = flag.Bool("update", false, "write docs/report.png, the screenshot in docs/reports.md")

// demoRun is the run of testdata/bench-demo.yaml all tests share.
type demoRun struct {
	dir, logs, html, allure, junit string
	out                            string
}

var (
	runOnce sync.Once
	run     *demoRun
	runErr  error
	binDir  string
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if run != nil {
		os.RemoveAll(run.dir)
	}
	os.Exit(code)
}

// theRun runs the demo sequence once, against the virtual board.
func theRun(t *testing.T) *demoRun {
	t.Helper()
	testenv.NeedTool(t, "openocd", "apt-get install openocd")
	testenv.NeedTool(t, "ffmpeg", "apt-get install ffmpeg")
	runOnce.Do(func() { run, runErr = doRun() })
	if runErr != nil {
		t.Fatal(runErr)
	}
	return run
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// hilrunBin builds hilrun once, without the race detector (or returns
// HILRUN_E2E_BIN).
func hilrunBin() (string, error) {
	if bin := os.Getenv("HILRUN_E2E_BIN"); bin != "" {
		return bin, nil
	}
	binOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		if binDir, binErr = os.MkdirTemp("", "hilrun-report-e2e-bin-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "hilrun")
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", binPath, "github.com/hilrun/hilrun/cmd/hilrun").CombinedOutput(); err != nil {
			binErr = fmt.Errorf("go build hilrun: %v\n%s", err, out)
		}
	})
	return binPath, binErr
}

func doRun() (*demoRun, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin, err := hilrunBin()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "hilrun-report-e2e-")
	if err != nil {
		return nil, err
	}
	r := &demoRun{dir: dir, logs: filepath.Join(dir, "logs"), html: filepath.Join(dir, "report.html"),
		allure: filepath.Join(dir, "allure-results"), junit: filepath.Join(dir, "junit.xml")}
	// Run from the run's folder, so that the page shows a command line
	// as a person would type it.
	seq, err := os.ReadFile(filepath.Join("testdata", "bench-demo.yaml"))
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(dir, "bench-demo.yaml"), seq, 0o644); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, bin, "run", "--sim", "--log-dir", "logs", "--html", "report.html", "--allure", "allure-results",
		"--junit", "junit.xml", "bench-demo.yaml")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	r.out = string(out)
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
		return nil, fmt.Errorf("hilrun run: %v, want exit code 1 (two steps fail on purpose):\n%s", err, out)
	}
	// The same page, after the fact, from the log folder.
	cmd = exec.CommandContext(ctx, bin, "report", "html", "-o", filepath.Join(dir, "later.html"), r.logs)
	if out, err := cmd.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("hilrun report html: %v\n%s", err, out)
	}
	return r, nil
}

// timelineCounts counts the tx and rx records of the run's console
// timeline.
func timelineCounts(t *testing.T, logs string) (tx, rx int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(logs, "*-bench-demo", "console.timeline.jsonl"))
	if len(files) != 1 {
		t.Fatalf("console timelines %v, want one", files)
	}
	f, err := os.Open(files[0])
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var l struct{ Dir string }
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			t.Fatal(err)
		}
		switch l.Dir {
		case "tx":
			tx++
		case "rx":
			rx++
		}
	}
	return tx, rx
}

func TestHTMLReportOfARealRun(t *testing.T) {
	r := theRun(t)
	st, shot, errs := cdp.LoadReport(t, r.html, 1280, 1800)
	if len(errs) > 0 {
		t.Errorf("the page reported errors: %q", errs)
	}
	if st.State != "ready" || st.Outcome != "FAILED" {
		t.Fatalf("page state %q, outcome %q; want ready and FAILED\nrun:\n%s", st.State, st.Outcome, r.out)
	}
	tx, rx := timelineCounts(t, r.logs)
	if len(st.Consoles) != 1 || st.Consoles[0].TX != tx || st.Consoles[0].RX != rx {
		t.Errorf("waterfall counts %+v, want tx %d and rx %d as in the timeline", st.Consoles, tx, rx)
	}
	if st.RowsTX != tx || st.RowsRX != rx {
		t.Errorf("waterfall rows: %d tx and %d rx, want %d and %d", st.RowsTX, st.RowsRX, tx, rx)
	}
	open := map[string]bool{}
	for _, o := range st.Open {
		open[o.Path] = true
		if (o.Path == "2.3" || o.Path == "5") && (!o.Expected || !o.Context) {
			t.Errorf("failed step %s is open without expected (%t) or its console bytes (%t)", o.Path, o.Expected, o.Context)
		}
		if o.Path == "2.3" && o.Sent != `status\n` {
			t.Errorf("failed step 2.3 shows it sent %q, want status\\n", o.Sent)
		}
	}
	if !open["2.3"] || !open["5"] || open["0"] || open["3"] {
		t.Errorf("open steps %+v, want the failed 2.3 and 5 and no passing one", st.Open)
	}
	if st.FailOns < 1 {
		t.Error("the waterfall marks no fail_on hit (the board printed HardFault)")
	}
	if st.Jitter != 1 || st.Series != 1 || st.Regions != 1 {
		t.Errorf("%d period histograms, %d memory plots, %d picture regions; want 1 each", st.Jitter, st.Series, st.Regions)
	}
	if !cdp.NotBlank(t, shot) {
		t.Error("the screenshot is blank")
	}
	if *update {
		if err := os.WriteFile(filepath.Join("..", "..", "docs", "report.png"), shot, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// pageData returns the data embedded in a report page.
func pageData(t *testing.T, path string) map[string]any {
	t.Helper()
	page, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`id="hilrun-data" data-encoding="gzip\+base64">([^<]*)</script>`).FindSubmatch(page)
	if m == nil {
		t.Fatalf("%s has no data", path)
	}
	gz, err := gzip.NewReader(base64.NewDecoder(base64.StdEncoding, bytes.NewReader(m[1])))
	if err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestReportHTMLLater checks that hilrun report html makes the same page
// from the log folder as --html did during the run.
func TestReportHTMLLater(t *testing.T) {
	r := theRun(t)
	during, later := pageData(t, r.html), pageData(t, filepath.Join(r.dir, "later.html"))
	delete(during, "generated")
	delete(later, "generated")
	a, _ := json.Marshal(during)
	b, _ := json.Marshal(later)
	if !bytes.Equal(a, b) {
		t.Errorf("the page made later differs from the page made during the run:\nduring: %.600s\nlater:  %.600s", a, b)
	}
}

// TestAllureCLI renders hilrun's Allure results with the Allure 3 CLI and
// checks the numbers it shows against the JUnit report of the same run.
func TestAllureCLI(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		testenv.Missing(t, "node is not installed (apt-get install nodejs npm), then run: npm ci --prefix e2e/report")
	}
	allure, err := filepath.Abs(filepath.Join("node_modules", ".bin", "allure"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(allure); err != nil {
		testenv.Missing(t, "e2e/report/node_modules is missing: run `npm ci --prefix e2e/report` from the repository root")
	}
	r := theRun(t)
	out := filepath.Join(t.TempDir(), "allure-report")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, allure, "generate", r.allure, "-o", out)
	cmd.Dir = t.TempDir()
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("allure generate: %v\n%s", err, b)
	}
	b, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatalf("allure wrote no summary: %v", err)
	}
	var sum struct {
		Stats  map[string]int `json:"stats"`
		Status string         `json:"status"`
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}

	jb, err := os.ReadFile(r.junit)
	if err != nil {
		t.Fatal(err)
	}
	var junit struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Errors   int `xml:"errors,attr"`
		Skipped  int // the suites' sum: junit-10 has no skipped count on <testsuites>
		Suites   []struct {
			Skipped int `xml:"skipped,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal(jb, &junit); err != nil {
		t.Fatal(err)
	}
	for _, s := range junit.Suites {
		junit.Skipped += s.Skipped
	}
	want := map[string]int{"total": junit.Tests, "failed": junit.Failures, "broken": junit.Errors, "skipped": junit.Skipped,
		"passed": junit.Tests - junit.Failures - junit.Errors - junit.Skipped}
	for k, v := range want {
		if sum.Stats[k] != v {
			t.Errorf("Allure shows %s %d, JUnit %d (Allure %v, JUnit %+v)", k, sum.Stats[k], v, sum.Stats, junit)
		}
	}
	if junit.Tests != 7 || junit.Failures != 2 || sum.Status != "failed" {
		t.Errorf("JUnit %+v and Allure status %q, want 7 test cases of which 2 failed", junit, sum.Status)
	}

	// The failing test cases as Allure shows them: nested steps, the
	// failure's message, the console and picture attachments.
	files, _ := filepath.Glob(filepath.Join(out, "data", "test-results", "*.json"))
	seen := map[string]bool{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var tr struct {
			Name   string
			Status string
			Error  struct{ Message string }
			Steps  []json.RawMessage
		}
		if err := json.Unmarshal(b, &tr); err != nil {
			t.Fatal(err)
		}
		switch tr.Name {
		case "02 group LED":
			seen[tr.Name] = true
			if tr.Status != "failed" || !strings.Contains(tr.Error.Message, `waiting for "led: off"`) || len(tr.Steps) < 4 {
				t.Errorf("Allure shows the LED group as %s, %q, %d steps; want failed, the expect's timeout, its 4 steps", tr.Status, tr.Error.Message, len(tr.Steps))
			}
			if !bytes.Contains(b, []byte("image/png")) || !regexp.MustCompile(`"name":\s*"console`).Match(b) || bytes.Contains(b, []byte("console console")) {
				t.Errorf("the LED group lacks its picture or console attachment: %.2000s", b)
			}
		case "05 send the board crashes":
			seen[tr.Name] = true
			if tr.Status != "failed" || !strings.Contains(tr.Error.Message, "fail_on") {
				t.Errorf("Allure shows the crash as %s, %q", tr.Status, tr.Error.Message)
			}
		}
	}
	if len(seen) != 2 {
		t.Errorf("Allure's test results lack a failing test case: saw %v of %d files", seen, len(files))
	}
}

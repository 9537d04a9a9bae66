//go:build unix

package reporte2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/hilrun/hilrun/internal/cdp"
	"github.com/hilrun/hilrun/internal/reporttest"
)

// TestHTMLMillionSteps checks the bounds of the HTML report for a run of a
// million steps: hilrun report html (built without the race detector)
// writes the page from the run's log folder in bounded memory, the page is
// under 20 MB, and once loaded in headless Chromium it holds at most 50,000
// elements and shows the run's console counts.
func TestHTMLMillionSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("writes the log folder of a million-step run (about 400 MB); not with -short")
	}
	bin, err := hilrunBin()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	logs := filepath.Join(dir, "logs")
	reporttest.WriteLargeRun(t, logs, 1_000_000, time.Date(2025, 3, 14, 9, 26, 53, 0, time.UTC))
	page := filepath.Join(dir, "report.html")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "report", "html", "-o", page, logs)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("hilrun report html: %v\n%s", err, out)
	}
	// Peak resident memory of the whole process: the event file is
	// hundreds of MB.
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss * 1024
	fi, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("a million steps: page %d bytes, hilrun report html peak RSS %.1f MiB", fi.Size(), float64(rss)/(1<<20))
	if fi.Size() >= 20<<20 {
		t.Errorf("the page is %d bytes, want under 20 MB", fi.Size())
	}
	if rss > 160<<20 {
		t.Errorf("hilrun report html peaked at %d bytes of memory, want bounded (under 160 MiB)", rss)
	}
	// Free the disk before the browser.
	os.RemoveAll(logs)

	st, shot, errs := cdp.LoadReport(t, page, 1280, 1024)
	if len(errs) > 0 {
		t.Errorf("the page reported errors: %q", errs)
	}
	t.Logf("page: state %s, %d elements, consoles %+v", st.State, st.Nodes, st.Consoles)
	if st.State != "ready" || st.Outcome != "FAILED" {
		t.Fatalf("page state %q, outcome %q; want ready and FAILED", st.State, st.Outcome)
	}
	if st.Nodes > 50000 || st.Nodes < 100 {
		t.Errorf("the page holds %d elements, want at most 50,000 (and a drawn page)", st.Nodes)
	}
	if len(st.Consoles) != 1 || st.Consoles[0].TX != 500_000 || st.Consoles[0].RX != 500_000 {
		t.Errorf("waterfall counts %+v, want 500,000 tx and rx", st.Consoles)
	}
	if st.Jitter != 1 || st.Series != 1 {
		t.Errorf("%d period histograms and %d memory plots, want 1 each", st.Jitter, st.Series)
	}
	if !cdp.NotBlank(t, shot) {
		t.Error("the screenshot is blank")
	}
}

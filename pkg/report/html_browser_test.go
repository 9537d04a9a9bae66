//go:build unix

package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/internal/cdp"
	"github.com/hilrun/hilrun/pkg/gate/files"
)

func TestHTMLInBrowser(t *testing.T) {
	dir := t.TempDir()
	events, tx, rx := htmlFixture(t, dir)
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, events, HTMLOptions{Files: files.Anywhere(), Info: htmlInfo, Now: htmlNow}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	st, shot, errs := cdp.LoadReport(t, page, 1280, 1600)
	t.Logf("page: %+v", st)
	if len(errs) > 0 {
		t.Errorf("the page reported errors: %q", errs)
	}
	if st.State != "ready" || st.Outcome != "FAILED" {
		t.Fatalf("page state %q, outcome %q; want ready and FAILED", st.State, st.Outcome)
	}
	if len(st.Consoles) != 1 || st.Consoles[0].TX != tx || st.Consoles[0].RX != rx {
		t.Errorf("waterfall counts %+v, want console tx %d rx %d", st.Consoles, tx, rx)
	}
	if st.RowsTX != tx || st.RowsRX != rx {
		t.Errorf("waterfall rows: %d tx, %d rx; want %d and %d", st.RowsTX, st.RowsRX, tx, rx)
	}
	opened := map[string]bool{}
	for _, o := range st.Open {
		opened[o.Path] = true
		if o.Path == "1.1" && (!o.Expected || !o.Context || o.Sent != `status\n`) {
			t.Errorf("the failed step 1.1 is open but lacks expected (%t), its console bytes (%t) or what it sent (%q)", o.Expected, o.Context, o.Sent)
		}
	}
	if !opened["1.1"] || !opened["1"] || !opened["5"] {
		t.Errorf("open steps %+v, want the failed step 1.1 in its group 1, and 5", st.Open)
	}
	if opened["0"] || opened["2"] {
		t.Errorf("passing steps are open: %+v", st.Open)
	}
	if st.Marks != 2 || st.FailOns != 1 {
		t.Errorf("waterfall marks %d expect matches and %d fail_on hits, want 2 and 1", st.Marks, st.FailOns)
	}
	if st.Jitter != 1 || st.Series != 1 || st.Regions != 1 || st.Builds != 2 {
		t.Errorf("jitter %d, memory plots %d, picture regions %d, builds %d; want 1, 1, 1 and 2", st.Jitter, st.Series, st.Regions, st.Builds)
	}
	// The region [24, 16, 16, 16] of the 64x48 picture, drawn on it (the
	// box's outline adds a pixel or two).
	want := []float64{24.0 / 64, 16.0 / 48, 16.0 / 64, 16.0 / 48}
	if len(st.RegionAt) != 4 {
		t.Errorf("region drawn at %v, want %v", st.RegionAt, want)
	} else {
		for i := range want {
			if d := st.RegionAt[i] - want[i]; d < -0.02 || d > 0.02 {
				t.Errorf("region drawn at %.3f, want %.3f", st.RegionAt, want)
				break
			}
		}
	}
	for _, want := range []string{"failed: compile", "main.c:12:5 'led' undeclared", "564/65536 B (0.9%)", "text 560, data 4, bss 2092"} {
		if !strings.Contains(st.BuildText, want) {
			t.Errorf("the builds section lacks %q: %q", want, st.BuildText)
		}
	}
	checkAxis(t, st.Axis.Width, st.Axis.Labels)
	if st.SearchRows != 1 {
		t.Errorf("searching the waterfall for HardFault leaves %d rows, want the 1 chunk that holds it", st.SearchRows)
	}
	if !cdp.NotBlank(t, shot) {
		t.Error("the screenshot is blank")
	}
}

// checkAxis: the timeline's axis has labels, each inside the canvas and
// clear of the next.
func checkAxis(t *testing.T, width float64, labels [][2]float64) {
	t.Helper()
	if len(labels) < 2 {
		t.Fatalf("the timeline's axis has %d labels, want at least 2", len(labels))
	}
	for i, l := range labels {
		if l[0] < 0 || l[1] > width {
			t.Errorf("axis label %d at [%.0f, %.0f] leaves the %.0f px canvas", i, l[0], l[1], width)
		}
		if i > 0 && l[0] < labels[i-1][1]+4 {
			t.Errorf("axis labels %d and %d overlap: %v", i-1, i, labels)
		}
	}
}

// The HTML report draws each parallel: step as lanes, one per branch,
// with its barrier crossings marked, and nests each branch's steps, its
// finally steps included, under the branch.
func TestHTMLParallelInBrowser(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, eventFile(t, parallelFixture()), HTMLOptions{Files: files.Anywhere(), Info: htmlInfo, Now: htmlNow}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	st, shot, errs := cdp.LoadReport(t, page, 1280, 2400)
	if p := os.Getenv("HILRUN_SHOT"); p != "" {
		os.WriteFile(p, shot, 0o644)
	}
	if len(errs) > 0 {
		t.Errorf("the page reported errors: %q", errs)
	}
	if st.State != "ready" || len(st.Lanes) != 1 || st.Lanes[0].Path != "1" || st.Lanes[0].Lanes != 2 || st.Lanes[0].Barriers != 1 {
		t.Errorf("state %q, lanes %+v: want the parallel step 1 in 2 lanes with 1 barrier crossing", st.State, st.Lanes)
	}
	opened := map[string]bool{}
	for _, o := range st.Open {
		opened[o.Path] = true
	}
	if !opened["1"] || !opened["1.sender"] || !opened["1.sender.1"] || opened["1.receiver"] {
		t.Errorf("open steps %+v, want the failed step 1.sender.1 in its branch and parallel step", st.Open)
	}
}

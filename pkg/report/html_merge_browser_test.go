//go:build unix

package report

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hilrun/hilrun/internal/cdp"
)

// TestMergeHTMLInBrowser draws the page merged from two shards: the
// table of each measurement per shard and a plot of each over the
// shards, and, in the flaky sequence's tab, its own table and plots.
func TestMergeHTMLInBrowser(t *testing.T) {
	dir := t.TempDir()
	jsons, _ := flakyShards(t, dir)
	page := filepath.Join(dir, "merged.html")
	if err := os.WriteFile(page, mergedPage(t, jsons), 0o644); err != nil {
		t.Fatal(err)
	}
	var st struct {
		Rows    []string
		Plots   []string
		Shards  []string
		From    string
		Tab     []string
		TabPlot int
	}
	errs := cdp.EvalReport(t, page, 1280, 1600, `(async () => {
  const panel = document.getElementById("shard-measurements");
  const out = {
    rows: [...panel.querySelectorAll("tr[data-measurement]")].map((r) => r.dataset.measurement + " " + r.dataset.shard),
    plots: [...panel.querySelectorAll(".series canvas")].map((c) => c.closest(".series").dataset.measurement),
    shards: [...panel.querySelectorAll(".series")].map((s) => s.dataset.measurement + " " + s.dataset.shards),
    from: panel.querySelector(".muted").textContent,
  };
  [...document.querySelectorAll(".tabs button")].find((b) => b.textContent.includes("flaky")).click();
  await new Promise((ok) => requestAnimationFrame(ok));
  out.tab = [...document.querySelectorAll("#measurements tr[data-measurement]")].map((r) => r.dataset.measurement);
  out.tabPlot = document.querySelectorAll("#measurements .series canvas").length;
  return out;
})()`, &st)
	if len(errs) > 0 {
		t.Errorf("the page reported errors: %q", errs)
	}
	wantRows := []string{"vbat shard 1/2", "vbat shard 2/2", "ripple shard 1/2", "ripple shard 2/2", "adc shard 2/2"}
	if len(st.Rows) != len(wantRows) {
		t.Fatalf("measurement rows %q, want %q", st.Rows, wantRows)
	}
	for i := range wantRows {
		if st.Rows[i] != wantRows[i] {
			t.Errorf("measurement row %d = %q, want %q", i, st.Rows[i], wantRows[i])
		}
	}
	if len(st.Plots) != 3 || st.Shards[0] != "vbat 2" || st.Shards[1] != "ripple 2" {
		t.Errorf("plots over shards %q (%q), want vbat and ripple over 2 shards, and adc", st.Plots, st.Shards)
	}
	if want := "merged from 2 reports: shard-2.json (shard 2/2, 1 sequence), shard-1.json (shard 1/2, 2 sequences)"; st.From != want {
		t.Errorf("the panel says %q, want %q", st.From, want)
	}
	if len(st.Tab) != 3 || st.TabPlot != 2 {
		t.Errorf("the flaky sequence's tab: measurements %q and %d plots, want adc, vbat and ripple, adc and ripple (2 values each) plotted", st.Tab, st.TabPlot)
	}
}

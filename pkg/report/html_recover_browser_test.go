//go:build unix

package report

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/internal/cdp"
	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// TestHTMLRecoveriesInBrowser: the page shows the bad benches with why,
// and each climb with its rungs, the failed one opened.
func TestHTMLRecoveriesInBrowser(t *testing.T) {
	chromium := testenv.NeedTool(t, "chromium", "apt-get install chromium")
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, recoveryFixture(t, dir), HTMLOptions{Files: files.Anywhere(), Now: htmlNow}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	b, err := cdp.Start(ctx, chromium, 1280, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.Navigate(ctx, "file://"+page); err != nil {
		t.Fatal(err)
	}
	var st struct {
		State    string   `json:"state"`
		Bad      []string `json:"bad"`
		Why      string   `json:"why"`
		Climbs   []string `json:"climbs"`
		Open     []string `json:"open"`
		Rungs    int      `json:"rungs"`
		Worked   int      `json:"worked"`
		Injected bool     `json:"injected"`
	}
	const js = `window.hilrunReady.then(() => ({
  state: document.body.dataset.state || "",
  bad: [...document.querySelectorAll("#benches .bad-bench")].map((e) => e.dataset.bench),
  why: (document.querySelector("#benches .bad-bench") || {}).textContent || "",
  climbs: [...document.querySelectorAll("#benches details.recovery")].map((e) => e.dataset.bench + ":" + e.dataset.recovered),
  open: [...document.querySelectorAll("#benches details.recovery[open]")].map((e) => e.dataset.bench),
  rungs: document.querySelectorAll("#benches tr.rung").length,
  worked: document.querySelectorAll("#benches tr.rung[data-worked=true]").length,
  injected: !!document.querySelector("#benches script, #benches img"),
}))`
	if err := b.Eval(ctx, js, &st); err != nil {
		t.Fatal(err)
	}
	if errs := b.Errors(); len(errs) > 0 {
		t.Errorf("the page reported errors: %q", errs)
	}
	if st.State != "ready" || strings.Join(st.Bad, ",") != "stuck" || !strings.Contains(st.Why, "hang.yaml ended in a bench error") {
		t.Errorf("page %+v: want it ready, bench stuck bad with why", st)
	}
	if strings.Join(st.Climbs, ",") != "good:true,stuck:false" || strings.Join(st.Open, ",") != "stuck" || st.Rungs != 3 || st.Worked != 1 || st.Injected {
		t.Errorf("climbs %v, open %v, %d rungs of which %d worked, markup from the board %t; want good:true,stuck:false, stuck open, 3 and 1, false", st.Climbs, st.Open, st.Rungs, st.Worked, st.Injected)
	}
}

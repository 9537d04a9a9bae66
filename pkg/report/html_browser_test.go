//go:build unix

package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hilrun/hilrun/internal/cdp"
	"github.com/hilrun/hilrun/internal/testenv"
)

// PageState is what the tests read from a loaded report page.
type PageState struct {
	State    string `json:"state"`
	Nodes    int    `json:"nodes"`
	Outcome  string `json:"outcome"`
	Consoles []struct {
		Name string `json:"name"`
		TX   int    `json:"tx"`
		RX   int    `json:"rx"`
	} `json:"consoles"`
	// RowsTX and RowsRX count the waterfall rows drawn.
	RowsTX int `json:"rowsTx"`
	RowsRX int `json:"rowsRx"`
	// Open lists the steps opened, with whether they show expected.
	Open []struct {
		Path     string `json:"path"`
		Status   string `json:"status"`
		Expected bool   `json:"expected"`
		Context  bool   `json:"context"`
	} `json:"open"`
	Marks   int `json:"marks"`
	FailOns int `json:"failOns"`
	Jitter  int `json:"jitter"`
	Series  int `json:"series"`
	Regions int `json:"regions"`
	Builds  int `json:"builds"`
}

// pageStateJS reads PageState from the page once its data is drawn.
const pageStateJS = `window.hilrunReady.then(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)))).then(() => ({
  state: document.body.dataset.state || "",
  nodes: document.getElementsByTagName("*").length,
  outcome: (document.getElementById("outcome") || {}).textContent || "",
  consoles: [...document.querySelectorAll(".wf-count")].map((e) => ({name: e.dataset.console, tx: +e.dataset.tx, rx: +e.dataset.rx})),
  rowsTx: document.querySelectorAll(".wf-row.tx").length,
  rowsRx: document.querySelectorAll(".wf-row.rx").length,
  open: [...document.querySelectorAll("details.step[open]")].map((e) => ({path: e.dataset.path, status: e.dataset.status,
    expected: !!e.querySelector(":scope > .body .expected"), context: !!e.querySelector(":scope > .body .ctx")})),
  marks: document.querySelectorAll(".wf-row mark:not(.failon)").length,
  failOns: document.querySelectorAll(".wf-row mark.failon").length,
  jitter: document.querySelectorAll("#jitter .jitter canvas").length,
  series: document.querySelectorAll("#memory .series canvas").length,
  regions: document.querySelectorAll("#pictures .pic svg rect").length,
  builds: document.querySelectorAll("#builds .build").length,
}))`

// LoadPage opens the page at path in headless Chromium and returns what it
// shows, a screenshot of it, and the errors the page reported. It skips
// (fails under CI=true) when chromium is not installed.
func LoadPage(t *testing.T, path string, width, height int) (PageState, []byte, []string) {
	t.Helper()
	chromium := testenv.NeedTool(t, "chromium", "apt-get install chromium")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	b, err := cdp.Start(ctx, chromium, width, height)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Navigate(ctx, "file://"+abs); err != nil {
		t.Fatal(err)
	}
	var st PageState
	if err := b.Eval(ctx, pageStateJS, &st); err != nil {
		t.Fatal(err)
	}
	shot, err := b.Screenshot(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	return st, shot, b.Errors()
}

// notBlank reports whether a PNG has more than a few colours over a
// good share of its area.
func notBlank(t *testing.T, shot []byte) bool {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("the screenshot is not a PNG: %v", err)
	}
	colours := map[[3]uint32]bool{}
	b := img.Bounds()
	differ := 0
	r0, g0, b0, _ := img.At(b.Min.X, b.Min.Y).RGBA()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colours[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
			if r != r0 || g != g0 || bl != b0 {
				differ++
			}
		}
	}
	return len(colours) > 20 && differ > (b.Dx()/3)*(b.Dy()/3)/20
}

func TestHTMLInBrowser(t *testing.T) {
	dir := t.TempDir()
	events, tx, rx := htmlFixture(t, dir)
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, events, HTMLOptions{Info: htmlInfo, Now: htmlNow}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	st, shot, errs := LoadPage(t, page, 1280, 1600)
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
		if o.Path == "1.1" && (!o.Expected || !o.Context) {
			t.Errorf("the failed step 1.1 is open but lacks expected (%t) or its console bytes (%t)", o.Expected, o.Context)
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
	if st.Jitter != 1 || st.Series != 1 || st.Regions != 1 || st.Builds != 1 {
		t.Errorf("jitter %d, memory plots %d, picture regions %d, builds %d; want 1 each", st.Jitter, st.Series, st.Regions, st.Builds)
	}
	if !notBlank(t, shot) {
		t.Error("the screenshot is blank")
	}
}

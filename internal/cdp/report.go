//go:build unix

package cdp

import (
	"bytes"
	"context"
	"image/png"
	"path/filepath"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/testenv"
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
		// Sent is the text the step sent, as the page shows it.
		Sent string `json:"sent"`
	} `json:"open"`
	Marks   int `json:"marks"`
	FailOns int `json:"failOns"`
	Jitter  int `json:"jitter"`
	Series  int `json:"series"`
	Regions int `json:"regions"`
	// RegionAt is where the first region drawn on a picture is, as a
	// fraction of the picture's width and height on the page: [x, y, w, h].
	RegionAt []float64 `json:"regionAt"`
	Builds   int       `json:"builds"`
	// BuildText is the text of the builds' section.
	BuildText string `json:"buildText"`
	// SearchRows is how many waterfall rows a search for HardFault
	// leaves with "only matching rows" checked.
	SearchRows int `json:"searchRows"`
	// Lanes are the parallel: steps drawn as lanes: the step's path, its
	// lanes (one per branch) and the barrier crossings marked.
	Lanes []struct {
		Path     string `json:"path"`
		Lanes    int    `json:"lanes"`
		Barriers int    `json:"barriers"`
	} `json:"lanes"`
	// Axis is where the timeline's axis labels are drawn, [left, right]
	// in CSS pixels, on a canvas Width wide.
	Axis struct {
		Width  float64      `json:"width"`
		Labels [][2]float64 `json:"labels"`
	} `json:"axis"`
}

// pageStateJS reads PageState from the page once its data is drawn; it
// searches the waterfall for HardFault, then clears the search.
const pageStateJS = `window.hilrunReady.then(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok)))).then(() => ({
  state: document.body.dataset.state || "",
  nodes: document.getElementsByTagName("*").length,
  outcome: (document.getElementById("outcome") || {}).textContent || "",
  consoles: [...document.querySelectorAll(".wf-count")].map((e) => ({name: e.dataset.console, tx: +e.dataset.tx, rx: +e.dataset.rx})),
  rowsTx: document.querySelectorAll(".wf-row.tx").length,
  rowsRx: document.querySelectorAll(".wf-row.rx").length,
  open: [...document.querySelectorAll("details.step[open]")].map((e) => ({path: e.dataset.path, status: e.dataset.status,
    expected: !!e.querySelector(":scope > .body .expected"), context: !!e.querySelector(":scope > .body .ctx"),
    sent: (e.querySelector(":scope > .body .sent") || {}).textContent || ""})),
  marks: document.querySelectorAll(".wf-row mark:not(.failon)").length,
  failOns: document.querySelectorAll(".wf-row mark.failon").length,
  jitter: document.querySelectorAll("#jitter .jitter canvas").length,
  series: document.querySelectorAll("#memory .series canvas").length,
  regions: document.querySelectorAll("#pictures .pic svg rect").length,
  regionAt: (() => {
    const r = document.querySelector("#pictures .pic svg rect"), img = r && r.closest(".pic").querySelector("img");
    if (!r || !img) return [];
    const a = r.getBoundingClientRect(), b = img.getBoundingClientRect();
    return [(a.left - b.left) / b.width, (a.top - b.top) / b.height, a.width / b.width, a.height / b.height];
  })(),
  lanes: [...document.querySelectorAll("#lanes .lanes canvas")].map((c) => ({path: c.dataset.path, lanes: +c.dataset.lanes, barriers: +c.dataset.barriers})),
  axis: JSON.parse((document.querySelector("#gantt canvas") || {dataset: {}}).dataset.axis || "{}"),
  builds: document.querySelectorAll("#builds .build").length,
  buildText: (document.getElementById("builds") || {}).textContent || "",
  searchRows: (() => {
    const q = document.querySelector("#waterfall input[type=search]"), only = document.getElementById("wf-only"), box = document.querySelector("#waterfall .wf");
    if (!q || !only || !box) return -1;
    q.value = "HardFault"; q.dispatchEvent(new Event("input"));
    only.checked = true; only.dispatchEvent(new Event("change"));
    const n = +box.dataset.rows;
    q.value = ""; q.dispatchEvent(new Event("input"));
    only.checked = false; only.dispatchEvent(new Event("change"));
    return n;
  })(),
}))`

// exerciseJS uses the page: it visits every sequence, opens every step,
// scrolls the waterfall and the timeline and clicks a waterfall row.
const exerciseJS = `(async () => {
  const pause = (ms) => new Promise((ok) => setTimeout(ok, ms));
  const tabs = [...document.querySelectorAll(".tabs button")];
  for (const tab of tabs.length ? tabs : [null]) {
    if (tab) { tab.click(); await pause(50); }
    document.querySelectorAll("details").forEach((d) => { d.open = true; });
    await pause(50);
    for (const sel of [".wf", "#gantt"]) {
      const box = document.querySelector(sel);
      if (!box) continue;
      box.scrollTop = box.scrollHeight;
      box.dispatchEvent(new Event("scroll"));
      await pause(50);
    }
    const row = document.querySelector(".wf-row");
    if (row) row.click();
    await pause(50);
  }
  return true;
})()`

// LoadReport opens the page at path in headless Chromium and returns what it
// shows, a screenshot of it, and the errors the page reported. It skips
// (fails under CI=true) when chromium is not installed.
func LoadReport(t testing.TB, path string, width, height int) (PageState, []byte, []string) {
	t.Helper()
	ctx, b, done := openReport(t, path, width, height)
	defer done()
	var st PageState
	if err := b.Eval(ctx, pageStateJS, &st); err != nil {
		t.Fatal(err)
	}
	shot, err := b.Screenshot(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	// Use the page as a person would, so that its errors show: every
	// sequence, every step opened, the waterfall and timeline scrolled,
	// a row clicked.
	if err := b.Eval(ctx, exerciseJS, nil); err != nil {
		t.Errorf("using the page: %v", err)
	}
	return st, shot, b.Errors()
}

// openReport opens the page at path in a headless Chromium of width by
// height; done closes it. It skips (fails under CI=true) when chromium is
// not installed.
func openReport(t testing.TB, path string, width, height int) (ctx context.Context, b *Browser, done func()) {
	t.Helper()
	chromium := testenv.NeedTool(t, "chromium", "apt-get install chromium")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	b, err := Start(ctx, chromium, width, height)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	done = func() { b.Close(); cancel() }
	abs, err := filepath.Abs(path)
	if err == nil {
		err = b.Navigate(ctx, "file://"+abs)
	}
	if err != nil {
		done()
		t.Fatal(err)
	}
	return ctx, b, done
}

// NotBlank reports whether a PNG has more than a few colours over a
// good share of its area.
func NotBlank(t testing.TB, shot []byte) bool {
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

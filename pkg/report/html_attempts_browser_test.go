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

// attemptView is an attempt as the step tree shows it.
type attemptView struct {
	Attempt int
	Status  string
	Open    bool
	Head    string
	Excerpt string
	// Steps are the steps listed under the attempt, as "PATH STATUS".
	Steps []string
}

// attemptsJS reads the attempts the step tree lists under the element
// that sel finds, opening each first.
const attemptsJS = `(async (sel) => {
  const root = document.querySelector(sel);
  if (!root) return [];
  const out = [];
  for (const d of root.querySelectorAll(":scope > details.attempt")) {
    const open = d.open;
    d.open = true;
    await new Promise((ok) => setTimeout(ok, 0));
    out.push({attempt: +d.dataset.attempt, status: d.dataset.status, open,
      head: d.querySelector(":scope > summary").textContent,
      excerpt: (d.querySelector(":scope > .ctx .excerpt") || {}).textContent || "",
      steps: [...d.querySelectorAll(":scope > details.step")].map((s) => s.dataset.path + " " + s.dataset.status)});
  }
  return out;
})`

// TestHTMLAttemptsInBrowser checks that the step tree shows every
// attempt of a retried group and of a retried sequence, each with its
// status, what the consoles printed during it and its own steps, the
// failed ones open.
func TestHTMLAttemptsInBrowser(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteHTML(f, retriedEventFile(t, flakyGroupRun(), flakySeqRun()), HTMLOptions{Files: files.Anywhere(), Now: htmlNow}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var got struct{ Group, Seq []attemptView }
	errs := cdp.EvalReport(t, page, 1280, 1600, `(async () => {
  const read = `+attemptsJS+`;
  const tab = (name) => [...document.querySelectorAll(".tabs button")].find((b) => b.textContent.includes(name)).click();
  tab("flaky");
  const group = await read('#steps details.step[data-path="1"]');
  tab("again");
  const seq = await read("#steps > div:last-child");
  return {group, seq};
})()`, &got)
	if len(errs) > 0 {
		t.Errorf("the page reported errors: %q", errs)
	}
	check := func(what string, got, want []attemptView) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: the tree shows %d attempts %+v, want %d", what, len(got), got, len(want))
		}
		for i, w := range want {
			g := got[i]
			if g.Attempt != w.Attempt || g.Status != w.Status || g.Open != w.Open || !strings.Contains(g.Head, w.Head) ||
				!strings.Contains(g.Excerpt, w.Excerpt) || strings.Join(g.Steps, ", ") != strings.Join(w.Steps, ", ") {
				t.Errorf("%s: attempt %d shows\n%+v\nwant\n%+v", what, i+1, g, w)
			}
		}
	}
	check("group adc", got.Group, []attemptView{
		{Attempt: 1, Status: "failed", Open: true, Head: "attempt 1 of 3: failed", Excerpt: "FAIL adc (call 1)", Steps: []string{"1.0 failed"}},
		{Attempt: 2, Status: "error", Open: true, Head: "attempt 2 of 3: error", Excerpt: "boot: ok", Steps: []string{"1.before_retry.0 passed", "1.0 error"}},
		{Attempt: 3, Status: "passed", Open: false, Head: "attempt 3 of 3: passed", Steps: []string{"1.before_retry.0 passed", "1.0 passed"}},
	})
	check("sequence again", got.Seq, []attemptView{
		{Attempt: 1, Status: "failed", Open: true, Head: "— no LED on", Steps: []string{"0 failed"}},
		{Attempt: 2, Status: "passed", Open: false, Head: "attempt 2 of 2: passed", Steps: []string{"0 passed"}},
	})
}

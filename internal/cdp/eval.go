//go:build unix

package cdp

import "testing"

// readyJS waits for a report page to have drawn its data.
const readyJS = `window.hilrunReady.then(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))))`

// EvalReport opens the report page at path in headless Chromium, waits
// for it to draw, evaluates expr (a JavaScript expression, which may be a
// promise) into out and returns the errors the page reported. It skips
// (fails under CI=true) when chromium is not installed.
func EvalReport(t testing.TB, path string, width, height int, expr string, out any) []string {
	t.Helper()
	ctx, b, done := openReport(t, path, width, height)
	defer done()
	if err := b.Eval(ctx, readyJS+".then(() => "+expr+")", out); err != nil {
		t.Fatal(err)
	}
	return b.Errors()
}

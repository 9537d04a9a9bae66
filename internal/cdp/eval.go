//go:build unix

package cdp

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/testenv"
)

// readyJS waits for a report page to have drawn its data.
const readyJS = `window.hilrunReady.then(() => new Promise((ok) => requestAnimationFrame(() => requestAnimationFrame(ok))))`

// EvalReport opens the report page at path in headless Chromium, waits
// for it to draw, evaluates expr (a JavaScript expression, which may be a
// promise) into out and returns the errors the page reported. It skips
// (fails under CI=true) when chromium is not installed.
func EvalReport(t testing.TB, path string, width, height int, expr string, out any) []string {
	t.Helper()
	chromium := testenv.NeedTool(t, "chromium", "apt-get install chromium")
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	b, err := Start(ctx, chromium, width, height)
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
	if err := b.Eval(ctx, readyJS+".then(() => "+expr+")", out); err != nil {
		t.Fatal(err)
	}
	return b.Errors()
}

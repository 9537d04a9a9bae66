package report

import (
	"io"
	"testing"

	"github.com/hilrun/hilrun/internal/reporttest"
	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/results"
)

// BenchmarkHTMLMillionSteps measures writing the HTML report of a run of a
// million steps (reporttest.WriteLargeRun); B/page is the page's size.
// TestHTMLMillionSteps in e2e/report checks its bounds.
func BenchmarkHTMLMillionSteps(b *testing.B) {
	dir := b.TempDir()
	events := reporttest.WriteLargeRun(b, dir, 1_000_000, base)
	b.ResetTimer()
	for b.Loop() {
		cw := &countWriter{}
		if err := WriteHTML(cw, events, HTMLOptions{Files: files.Anywhere(), Now: htmlNow}); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(cw.n), "B/page")
	}
}

// BenchmarkReports100k compares the HTML report with the JSON report for
// the same event file of 100,000 steps: both read it through the summary
// rule; the HTML report also reads the console timeline.
func BenchmarkReports100k(b *testing.B) {
	dir := b.TempDir()
	events := reporttest.WriteLargeRun(b, dir, 100_000, base)
	b.Run("html", func(b *testing.B) {
		for b.Loop() {
			if err := WriteHTML(io.Discard, events, HTMLOptions{Files: files.Anywhere(), Now: htmlNow}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		for b.Loop() {
			if err := WriteJSON(io.Discard, events, results.Options{}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

type countWriter struct{ n int64 }

func (c *countWriter) Write(p []byte) (int, error) {
	c.n += int64(len(p))
	return len(p), nil
}

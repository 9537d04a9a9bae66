//go:build unix

package report

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"strconv"
	"testing"
	"time"

	"github.com/hilrun/hilrun/internal/cdp"
	"github.com/hilrun/hilrun/pkg/results"
)

// writeLargeRun writes the event file, console log and timeline of a run of
// steps steps: a repeat every 10 ms of iterations of a send (with its
// expect) and a mem_read, in which one iteration in a hundred fails. It
// writes them directly, as a Stream and a console would, since running a
// million steps takes minutes.
func writeLargeRun(tb testing.TB, dir string, steps int) string {
	tb.Helper()
	logDir := filepath.Join(dir, "20250314T092653Z-soak")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		tb.Fatal(err)
	}
	create := func(path string) (*os.File, *bufio.Writer) {
		f, err := os.Create(path)
		if err != nil {
			tb.Fatal(err)
		}
		return f, bufio.NewWriterSize(f, 1<<20)
	}
	events := filepath.Join(dir, "20250314T092653Z-"+results.EventFile)
	ef, ew := create(events)
	lf, lw := create(filepath.Join(logDir, "console.log"))
	tf, tw := create(filepath.Join(logDir, "console.timeline.jsonl"))
	logPath := filepath.Join(logDir, "console.log")

	start := base.Format(time.RFC3339Nano)
	fmt.Fprintf(ew, `{"type":"start","seq":0,"sequence":{"name":"soak","file":"soak.yaml","status":"","started_at":%q,"duration_ms":0}}`+"\n", start)
	var off int64
	iterations := steps / 2
	us := func(d int64) string { return strconv.FormatFloat(float64(d)/1000, 'f', 3, 64) }
	at := func(d int64) string { return base.Add(time.Duration(d) * time.Microsecond).Format(time.RFC3339Nano) }
	for i := 0; i < iterations; i++ {
		t0 := int64(i)*10000 + int64(i%7)*13 // µs
		reply := fmt.Sprintf("echo ok %d\r\nok %d\r\nsim> ", i, i)
		fmt.Fprintf(tw, `{"t":%q,"us":%d,"dir":"tx","off":%d,"n":%d,"data":"echo ok %d\\n"}`+"\n", at(t0+10), t0+10, off, len(fmt.Sprint(i))+9, i)
		fmt.Fprintf(tw, `{"t":%q,"us":%d,"dir":"rx","off":%d,"n":%d}`+"\n", at(t0+60), t0+60, off, len(reply))
		lw.WriteString(reply)
		status, extra := "passed", fmt.Sprintf(`,"message":"matched \"ok %d\"","data":{"bytes":9,"cursor":%d,"match":"ok %d","offset":%d,"waited_ms":0.050}`, i, off, i, off+int64(len(reply))-len64(fmt.Sprintf("ok %d\r\nsim> ", i)))
		if i%100 == 99 {
			status, extra = "failed", `,"message":"timed out after 1s waiting for \"never\"","expected":"\"never\"","received":"sim\u003e "`
		}
		fmt.Fprintf(ew, `{"type":"step","seq":0,"step":{"index":%d,"path":"0#%d.0","kind":"send","name":"echo","status":%q,"started_ms":%s,"duration_ms":0.080%s,"file":"soak.yaml","line":5,"column":7}}`+"\n",
			2*i, i, status, us(t0), extra)
		fmt.Fprintf(ew, `{"type":"step","seq":0,"step":{"index":%d,"path":"0#%d.1","kind":"mem_read","name":"counter","status":"passed","started_ms":%s,"duration_ms":0.400,"message":"counter: 0x%08x","data":{"address":536870912,"label":"counter","values":[%d],"width":32},"file":"soak.yaml","line":7,"column":7}}`+"\n",
			2*i+1, i, us(t0+100), i, i)
		off += int64(len(reply))
	}
	dur := us(int64(iterations) * 10000)
	fmt.Fprintf(ew, `{"type":"step","seq":0,"step":{"index":%d,"path":"0","kind":"repeat","name":"soak","status":"failed","started_ms":0.000,"duration_ms":%s,"data":{"iterations":%d,"max_late_us":91,"every_ms":10},"file":"soak.yaml","line":3,"column":5}}`+"\n",
		steps, dur, iterations)
	fmt.Fprintf(ew, `{"type":"end","seq":0,"sequence":{"name":"soak","file":"soak.yaml","status":"failed","started_at":%q,"duration_ms":%s,"logs":{"console":%q}}}`+"\n",
		start, dur, logPath)
	for _, p := range []struct {
		f *os.File
		w *bufio.Writer
	}{{ef, ew}, {lf, lw}, {tf, tw}} {
		if err := p.w.Flush(); err != nil {
			tb.Fatal(err)
		}
		if err := p.f.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	return events
}

func len64(s string) int64 { return int64(len(s)) }

// watchHeap samples the bytes of live and not yet swept heap objects until
// the returned function is called, which returns the largest sample.
func watchHeap() func() uint64 {
	done := make(chan struct{})
	result := make(chan uint64)
	go func() {
		sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		var top uint64
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			metrics.Read(sample)
			top = max(top, sample[0].Value.Uint64())
			select {
			case <-done:
				result <- top
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(done)
		return <-result
	}
}

// TestHTMLMillionSteps checks the bounds of the HTML report for a run of a
// million steps: the file stays under 20 MB, and once loaded in headless
// Chromium the page holds at most 50,000 elements.
func TestHTMLMillionSteps(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a million-step run (about 400 MB); not with -short")
	}
	dir := t.TempDir()
	events := writeLargeRun(t, dir, 1_000_000)
	page := filepath.Join(dir, "report.html")
	f, err := os.Create(page)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	peak := watchHeap()
	if err := WriteHTML(f, events, HTMLOptions{Now: htmlNow}); err != nil {
		t.Fatal(err)
	}
	heap := peak()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	// Bounded memory: the event file is hundreds of MB, the heap while
	// writing stays a small fraction of it.
	t.Logf("peak live heap while writing: %.1f MiB", float64(heap)/(1<<20))
	if heap > 128<<20 {
		t.Errorf("the heap reached %d bytes while writing the page, want under 128 MiB", heap)
	}
	fi, err := os.Stat(page)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the page of a million steps is %d bytes", fi.Size())
	if fi.Size() >= 20<<20 {
		t.Errorf("the page is %d bytes, want under 20 MB", fi.Size())
	}
	// The event file is no longer needed: free the disk before the browser.
	os.Remove(events)
	st, shot, errs := cdp.LoadReport(t, page, 1280, 1024)
	if len(errs) > 0 {
		t.Errorf("the page reported errors: %q", errs)
	}
	t.Logf("page: state %s, %d elements, consoles %+v", st.State, st.Nodes, st.Consoles)
	if st.State != "ready" {
		t.Fatalf("page state %q, want ready", st.State)
	}
	if st.Nodes > 50000 || st.Nodes < 100 {
		t.Errorf("the page holds %d elements, want at most 50,000 (and a drawn page)", st.Nodes)
	}
	if len(st.Consoles) != 1 || st.Consoles[0].TX != 500_000 || st.Consoles[0].RX != 500_000 {
		t.Errorf("waterfall counts %+v, want 500,000 tx and rx", st.Consoles)
	}
	if !cdp.NotBlank(t, shot) {
		t.Error("the screenshot is blank")
	}
}

// BenchmarkHTMLMillionSteps measures writing the HTML report of a run of a
// million steps (see writeLargeRun); B/page is the page's size.
func BenchmarkHTMLMillionSteps(b *testing.B) {
	dir := b.TempDir()
	events := writeLargeRun(b, dir, 1_000_000)
	b.ResetTimer()
	for b.Loop() {
		cw := &countWriter{}
		if err := WriteHTML(cw, events, HTMLOptions{Now: htmlNow}); err != nil {
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
	events := writeLargeRun(b, dir, 100_000)
	b.Run("html", func(b *testing.B) {
		for b.Loop() {
			if err := WriteHTML(io.Discard, events, HTMLOptions{Now: htmlNow}); err != nil {
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

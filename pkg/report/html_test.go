package report

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

// htmlNow is when the fixture's pages say they were made.
var htmlNow = func() time.Time { return time.Date(2025, 3, 14, 10, 0, 0, 0, time.UTC) }

// htmlInfo is the fixture's run information.
var htmlInfo = RunInfo{
	Version: "v0.9.0-test", Command: []string{"hilrun", "run", "--html", "r.html", "demo.yaml"},
	Bench: []Binding{{Sequence: "demo", Kind: "device", Name: "console", Target: "/dev/ttyACM0 @ 115200"},
		{Sequence: "demo", Kind: "probe", Name: "board", Target: "openocd 127.0.0.1:4444"}},
}

// timelineRec is one line the fixture writes to a console timeline.
type timelineRec struct {
	at   time.Duration
	dir  string
	data string
}

// htmlFixture writes the event file, console log and timeline and a
// picture of a run with what the page shows: a step tree with a failing
// expect in a group, a fail_on hit, a timed repeat of memory reads, a
// camera step with an expect_image region, a build. It returns the event
// file and the console's tx and rx record counts.
func htmlFixture(t *testing.T, dir string) (events string, tx, rx int) {
	t.Helper()
	ms := time.Millisecond
	logDir := filepath.Join(dir, "20250314T092653Z-demo")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		t.Fatal(err)
	}
	pic := filepath.Join(logDir, "led.png")
	img := image.NewRGBA(image.Rect(0, 0, 64, 48))
	for y := 0; y < 48; y++ {
		for x := 0; x < 64; x++ {
			img.Set(x, y, color.RGBA{20, 20, 30, 255})
		}
	}
	for y := 16; y < 32; y++ {
		for x := 24; x < 40; x++ {
			img.Set(x, y, color.RGBA{60, 240, 80, 255})
		}
	}
	var pb bytes.Buffer
	if err := png.Encode(&pb, img); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pic, pb.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	recs := []timelineRec{
		{1 * ms, "tx", "version\n"},
		{2 * ms, "rx", "version\r\nfw 1.2.3\r\nsim> "},
		{5 * ms, "tx", "led on\n"},
		{6 * ms, "rx", "led on\r\nOK\r\nsim> "},
		{10 * ms, "tx", "status\n"},
		{11 * ms, "rx", "status\r\nled: \x1b[1mon\x1b[0m\r\n"},
		{500 * ms, "rx", "sim> "},
		{560 * ms, "tx", "selftest\n"},
		{561 * ms, "rx", "selftest\r\nHardFault at 0x0800\r\n"},
	}
	var raw bytes.Buffer
	var tl bytes.Buffer
	opened := base.Add(-time.Millisecond)
	for _, r := range recs {
		at := base.Add(r.at)
		line := map[string]any{"t": at.Format(time.RFC3339Nano), "us": at.Sub(opened).Microseconds(), "dir": r.dir, "off": raw.Len(), "n": len(r.data)}
		if r.dir == "tx" {
			line["data"] = r.data // the bytes sent, as the console logs them (UTF-8 text)
			tx++
		} else {
			raw.WriteString(r.data)
			rx++
		}
		b, _ := json.Marshal(line)
		tl.Write(append(b, '\n'))
	}
	logPath := filepath.Join(logDir, "console.log")
	if err := os.WriteFile(logPath, raw.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(logDir, "console.timeline.jsonl"), tl.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	st := func(i int, path, kind, name string, status runner.Status, start, dur time.Duration) runner.StepResult {
		return runner.StepResult{Index: i, Path: path, Kind: kind, Name: name, Status: status, Started: start, Duration: dur, File: "demo.yaml", Line: 3 + i}
	}
	var steps []runner.StepResult
	s0 := st(0, "0", "send", "version", runner.Passed, 1*ms, 1500*time.Microsecond)
	s0.Message, s0.Data = `matched "fw 1.2.3"`, map[string]any{"bytes": 8, "cursor": 0, "match": "fw 1.2.3", "offset": 9}
	s10 := st(1, "1.0", "send", "led on", runner.Passed, 5*ms, 1500*time.Microsecond)
	s10.Message, s10.Data = `matched "OK"`, map[string]any{"match": "OK", "offset": 32}
	s11 := st(2, "1.1", "send", "status shows the LED off", runner.Failed, 10*ms, 300*ms)
	s11.Message = `timed out after 300ms waiting for "led: off"; last received: "led: \x1b[1mon\x1b[0m"`
	s11.Expected, s11.Received = `"led: off"`, "status\r\nled: \\x1b[1mon\\x1b[0m\r\n"
	s1 := st(3, "1", "group", "led", runner.Failed, 5*ms, 305*ms)
	steps = append(steps, s0, s10, s11, s1)
	// A timed repeat of memory reads: 20 iterations every 10 ms.
	for i := 0; i < 20; i++ {
		start := 320*ms + time.Duration(i)*10*ms + time.Duration(i%3)*100*time.Microsecond
		r := st(4+i, fmt.Sprintf("2#%d.0", i), "mem_read", "counter", runner.Passed, start, 400*time.Microsecond)
		r.Data = map[string]any{"address": uint64(0x20000000), "width": 32, "values": []uint64{uint64(3 * i * i)}, "label": "counter"}
		steps = append(steps, r)
	}
	rep := st(24, "2", "repeat", "poll the counter", runner.Passed, 320*ms, 200*ms)
	rep.Data = map[string]any{"iterations": 20, "max_late_us": int64(212), "every_ms": 10.0}
	cam := st(25, "3", "camera", "the LED is lit", runner.Passed, 530*ms, 20*ms)
	cam.Message, cam.Attachments = "1 picture(s) from board, image checks passed", []string{pic}
	cam.Data = map[string]any{"camera": "board", "frames": []string{pic}, "checks": []map[string]any{
		{"frame": pic, "region": []int{24, 16, 16, 16}, "brightness": 0.641, "color": "#3cf050", "passed": true}}}
	bld := st(26, "4", "build", "firmware", runner.Passed, 551*ms, 5*ms)
	bld.Message = "flash 564 bytes, ram 2096 bytes"
	bld.Data = map[string]any{"ok": true, "class": "none", "summary": "flash 564/65536 bytes (0.9%)", "exit_code": 0,
		"command": []any{"make", "-C", "fw"}, "duration_ms": 5.0, "tail": "arm-none-eabi-size fw.elf\n", "text": 560, "data": 4, "bss": 2092,
		"flash_bytes": 564, "ram_bytes": 2096, "flash_total": 65536, "flash_percent": 0.9,
		"diagnostic": map[string]any{"file": "", "line": 0, "column": 0, "message": ""}}
	fo := st(27, "5", "send", "self test", runner.Failed, 560*ms, 2*ms)
	fo.Message = `output matched fail_on pattern "HardFault": "HardFault at 0x0800"`
	bad := st(28, "6", "build", "broken firmware", runner.Failed, 563*ms, 3*ms)
	bad.Message = "compile error: main.c:12:5: 'led' undeclared (first use in this function)"
	bad.Data = map[string]any{"ok": false, "class": "compile", "summary": "main.c:12:5: 'led' undeclared (first use in this function)", "exit_code": 2,
		"command": []any{"make", "-C", "fw"}, "duration_ms": 3.0, "tail": "main.c:12:5: error: 'led' undeclared (first use in this function)\nmake: *** [main.o] Error 1\n",
		"diagnostic": map[string]any{"file": "main.c", "line": 12, "column": 5, "message": "'led' undeclared (first use in this function)"}}
	fin := st(29, "finally.0", "send", "LED off", runner.Skipped, 567*ms, 0)
	steps = append(steps, rep, cam, bld, fo, bad, fin)

	seqs := []runner.SequenceResult{{
		Name: "demo", File: "demo.yaml", Status: runner.Failed, StartedAt: base, Duration: 570 * ms,
		Logs: map[string]string{"console": logPath}, Steps: steps,
	}}
	path, err := results.WriteResults(dir, seqs)
	if err != nil {
		t.Fatal(err)
	}
	events = filepath.Join(dir, "20250314T092653Z-"+results.EventFile)
	if err := os.Rename(path, events); err != nil {
		t.Fatal(err)
	}
	return events, tx, rx
}

// htmlPageData returns the JSON data embedded in an HTML report.
func htmlPageData(t *testing.T, page []byte) []byte {
	t.Helper()
	m := regexp.MustCompile(`(?s)<script type="application/octet-stream" id="hilrun-data" data-encoding="gzip\+base64">(.*?)</script>`).FindSubmatch(page)
	if m == nil {
		t.Fatal("the page has no data block")
	}
	gz, err := gzip.NewReader(base64.NewDecoder(base64.StdEncoding, bytes.NewReader(m[1])))
	if err != nil {
		t.Fatal(err)
	}
	data, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestHTMLData(t *testing.T) {
	dir := t.TempDir()
	events, tx, rx := htmlFixture(t, dir)
	var page bytes.Buffer
	if err := WriteHTML(&page, events, HTMLOptions{Files: files.Anywhere(), Info: htmlInfo, Now: htmlNow}); err != nil {
		t.Fatal(err)
	}
	data := htmlPageData(t, page.Bytes())
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, data, "", " "); err != nil {
		t.Fatalf("the page's data is not JSON: %v", err)
	}
	golden(t, "report.golden.html.json", append(pretty.Bytes(), '\n'))

	var doc struct {
		Sequences []struct {
			Consoles []struct {
				Counts struct{ TX, RX int }
			}
			Jitter []struct {
				N     int
				P50MS float64 `json:"p50_ms"`
			}
			Series []struct{ N int }
		}
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	s := doc.Sequences[0]
	if c := s.Consoles[0].Counts; c.TX != tx || c.RX != rx {
		t.Errorf("console counts tx %d rx %d, want %d and %d", c.TX, c.RX, tx, rx)
	}
	if len(s.Jitter) != 1 || s.Jitter[0].N != 19 {
		t.Errorf("jitter = %+v, want the 19 periods of 20 iterations", s.Jitter)
	}
	if len(s.Series) != 1 || s.Series[0].N != 20 {
		t.Errorf("series = %+v, want one of 20 values", s.Series)
	}
	for _, want := range []string{`<meta http-equiv="Content-Security-Policy" content="default-src 'none'`, `id="pic-0" data-name="led.png" data-type="image/png"`, "<title>FAILED demo · hilrun report</title>"} {
		if !bytes.Contains(page.Bytes(), []byte(want)) {
			t.Errorf("the page lacks %s", want)
		}
	}
	// Nothing the page could load from elsewhere.
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?(https?:|//)`).Find(page.Bytes()); m != nil {
		t.Errorf("the page refers to the network: %s", m)
	}
}

// TestHTMLMovedLogFolder renders a report from a log folder that was moved
// since the run: the console log and the picture are found beside the
// event file.
func TestHTMLMovedLogFolder(t *testing.T) {
	dir := t.TempDir()
	events, tx, _ := htmlFixture(t, filepath.Join(dir, "before"))
	if err := os.Rename(filepath.Join(dir, "before"), filepath.Join(dir, "after")); err != nil {
		t.Fatal(err)
	}
	events = filepath.Join(dir, "after", filepath.Base(events))
	var page bytes.Buffer
	if err := WriteHTML(&page, events, HTMLOptions{Files: files.Anywhere(), Now: htmlNow}); err != nil {
		t.Fatal(err)
	}
	data := string(htmlPageData(t, page.Bytes()))
	if !strings.Contains(data, fmt.Sprintf(`"counts":{"tx":%d`, tx)) {
		t.Errorf("the moved console log was not found: %.300s", data)
	}
	if !strings.Contains(page.String(), `id="pic-0"`) {
		t.Error("the moved picture was not embedded")
	}
}

// TestHTMLTruncatedEvents makes a page from an event file cut inside a
// record: what came before is shown, with a word on what happened.
func TestHTMLTruncatedEvents(t *testing.T) {
	dir := t.TempDir()
	events, _, _ := htmlFixture(t, dir)
	b, err := os.ReadFile(events)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(events, b[:len(b)-40], 0o644); err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, events, HTMLOptions{Files: files.Anywhere(), Now: htmlNow}); err != nil {
		t.Fatal(err)
	}
	data := string(htmlPageData(t, page.Bytes()))
	if !strings.Contains(data, results.CutShort) || !strings.Contains(data, "ends inside a record") {
		t.Errorf("the page does not say the run was cut short: %.500s", data)
	}
}

// TestHTMLLongTimelineLine gives a console timeline a line longer than the
// page reads (a huge send): it is counted as unreadable, and the records
// after it are still shown.
func TestHTMLLongTimelineLine(t *testing.T) {
	dir := t.TempDir()
	events, tx, rx := htmlFixture(t, dir)
	tl := filepath.Join(dir, "20250314T092653Z-demo", "console.timeline.jsonl")
	b, err := os.ReadFile(tl)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	long := `{"t":"2025-03-14T09:26:53.0015Z","us":1500,"dir":"tx","off":0,"n":5000000,"data":"` + strings.Repeat("x", 5_000_000) + "\"}\n"
	var out []byte
	out = append(out, lines[0]...)
	out = append(out, long...)
	for _, l := range lines[1:] {
		out = append(out, l...)
	}
	if err := os.WriteFile(tl, out, 0o644); err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, events, HTMLOptions{Files: files.Anywhere(), Now: htmlNow}); err != nil {
		t.Fatal(err)
	}
	if page.Len() > 1<<20 {
		t.Errorf("the page is %d bytes: the long line went into it", page.Len())
	}
	data := string(htmlPageData(t, page.Bytes()))
	want := fmt.Sprintf(`"counts":{"tx":%d,"rx":%d,"events":0,"tx_bytes":31,"rx_bytes":102,"unreadable":1}`, tx, rx)
	if !strings.Contains(data, want) {
		t.Errorf("the page's console counts are not %s: %.400s", want, data[strings.Index(data, `"consoles"`):])
	}
}

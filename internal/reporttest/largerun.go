// Package reporttest makes the log folder of a long run for the tests and
// benchmarks of hilrun's reports, without running it: running a million
// steps takes minutes.
package reporttest

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/results"
)

// WriteLargeRun writes into dir the event file, console log and console
// timeline of a run of steps steps (an even number) that started at start,
// as a Stream and a console would have: a repeat every 10 ms of iterations
// of a send (with its expect, the console answering) and a mem_read, in
// which one iteration in a hundred fails. It returns the event file's path.
// The run's sequence is named "soak"; its folder is <stamp>-soak.
func WriteLargeRun(tb testing.TB, dir string, steps int, start time.Time) string {
	tb.Helper()
	stamp := start.UTC().Format("20060102T150405Z")
	logDir := filepath.Join(dir, stamp+"-soak")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		tb.Fatal(err)
	}
	type file struct {
		f *os.File
		w *bufio.Writer
	}
	create := func(path string) file {
		f, err := os.Create(path)
		if err != nil {
			tb.Fatal(err)
		}
		return file{f, bufio.NewWriterSize(f, 1<<20)}
	}
	events := filepath.Join(dir, stamp+"-"+results.EventFile)
	logPath := filepath.Join(logDir, "console.log")
	ev, lg, tl := create(events), create(logPath), create(filepath.Join(logDir, "console.timeline.jsonl"))

	startText := start.UTC().Format(time.RFC3339Nano)
	ev.w.WriteString(`{"type":"start","seq":0,"sequence":{"name":"soak","file":"soak.yaml","status":"","started_at":"` + startText + `","duration_ms":0}}` + "\n")
	var b []byte
	ms := func(b []byte, us int64) []byte { return strconv.AppendFloat(b, float64(us)/1000, 'f', 3, 64) }
	at := func(b []byte, us int64) []byte {
		return start.Add(time.Duration(us)*time.Microsecond).UTC().AppendFormat(b, time.RFC3339Nano)
	}
	var off int64
	iterations := steps / 2
	for i := 0; i < iterations; i++ {
		t0 := int64(i)*10000 + int64(i%7)*13 // µs
		n := strconv.Itoa(i)
		reply := "echo ok " + n + "\r\nok " + n + "\r\nsim> "
		match := off + int64(len("echo ok "+n+"\r\n"))

		b = append(b[:0], `{"t":"`...)
		b = at(b, t0+10)
		b = append(b, `","us":`...)
		b = strconv.AppendInt(b, t0+10, 10)
		b = append(b, `,"dir":"tx","off":`...)
		b = strconv.AppendInt(b, off, 10)
		b = append(b, `,"n":`...)
		b = strconv.AppendInt(b, int64(len(n)+9), 10)
		b = append(b, `,"data":"echo ok `+n+`\\n"}`+"\n"...)
		b = append(b, `{"t":"`...)
		b = at(b, t0+60)
		b = append(b, `","us":`...)
		b = strconv.AppendInt(b, t0+60, 10)
		b = append(b, `,"dir":"rx","off":`...)
		b = strconv.AppendInt(b, off, 10)
		b = append(b, `,"n":`...)
		b = strconv.AppendInt(b, int64(len(reply)), 10)
		b = append(b, "}\n"...)
		tl.w.Write(b)
		lg.w.WriteString(reply)

		b = append(b[:0], `{"type":"step","seq":0,"step":{"index":`...)
		b = strconv.AppendInt(b, int64(2*i), 10)
		b = append(b, `,"path":"0#`+n+`.0","kind":"send","name":"echo","status":`...)
		if i%100 == 99 {
			b = append(b, `"failed","started_ms":`...)
			b = ms(b, t0)
			b = append(b, `,"duration_ms":0.080,"message":"timed out after 1s waiting for \"never\"","expected":"\"never\"","received":"sim\u003e "`...)
		} else {
			b = append(b, `"passed","started_ms":`...)
			b = ms(b, t0)
			b = append(b, `,"duration_ms":0.080,"message":"matched \"ok `+n+`\"","data":{"bytes":9,"cursor":`...)
			b = strconv.AppendInt(b, off, 10)
			b = append(b, `,"match":"ok `+n+`","offset":`...)
			b = strconv.AppendInt(b, match, 10)
			b = append(b, `,"waited_ms":0.050}`...)
		}
		b = append(b, `,"file":"soak.yaml","line":5,"column":7}}`+"\n"...)
		b = append(b, `{"type":"step","seq":0,"step":{"index":`...)
		b = strconv.AppendInt(b, int64(2*i+1), 10)
		b = append(b, `,"path":"0#`+n+`.1","kind":"mem_read","name":"counter","status":"passed","started_ms":`...)
		b = ms(b, t0+100)
		b = append(b, `,"duration_ms":0.400,"message":"counter: `+n+`","data":{"address":536870912,"label":"counter","values":[`+n+`],"width":32},"file":"soak.yaml","line":7,"column":7}}`+"\n"...)
		ev.w.Write(b)
		off += int64(len(reply))
	}
	dur := string(ms(nil, int64(iterations)*10000))
	ev.w.WriteString(`{"type":"step","seq":0,"step":{"index":` + strconv.Itoa(steps) + `,"path":"0","kind":"repeat","name":"soak","status":"failed","started_ms":0.000,"duration_ms":` + dur +
		`,"data":{"iterations":` + strconv.Itoa(iterations) + `,"max_late_us":91,"every_ms":10},"file":"soak.yaml","line":3,"column":5}}` + "\n")
	q, _ := json.Marshal(logPath)
	ev.w.WriteString(`{"type":"end","seq":0,"sequence":{"name":"soak","file":"soak.yaml","status":"failed","started_at":"` + startText + `","duration_ms":` + dur +
		`,"logs":{"console":` + string(q) + `}}}` + "\n")
	for _, f := range []file{ev, lg, tl} {
		if err := f.w.Flush(); err != nil {
			tb.Fatal(err)
		}
		if err := f.f.Close(); err != nil {
			tb.Fatal(err)
		}
	}
	return events
}

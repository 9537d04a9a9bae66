package report

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
	"github.com/hilrun/hilrun/pkg/results"
	"github.com/hilrun/hilrun/pkg/runner"
)

//go:embed html/report.css html/report.js
var htmlAssets embed.FS

// HTMLOptions configures WriteHTML.
type HTMLOptions struct {
	// Summary bounds what a repeat lists (package results).
	Summary results.Options
	// Info is shown in the page's summary: version, command line, bench.
	Info RunInfo
	// Now is when the page says it was made; nil means time.Now.
	Now func() time.Time
	// ConsoleDir, if set, gives the folder of the console logs
	// (NAME.log, NAME.timeline.jsonl) of sequence seq (numbered from 0)
	// when the event file names none: consoles logged in a private
	// folder, not to be named in the other reports.
	ConsoleDir func(seq int) string
	// Files opens what the event file names (console logs, pictures)
	// and writes the report's own files; the zero policy opens none
	// (hilrun run passes files.Anywhere, the MCP server its run folder).
	Files files.Policy
}

// consoleLogs lists the console logs in dir that have a timeline, by
// console name.
func consoleLogs(dir string) map[string]string {
	logs := map[string]string{}
	matches, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, m := range matches {
		if _, err := os.Stat(strings.TrimSuffix(m, ".log") + ".timeline.jsonl"); err == nil {
			logs[strings.TrimSuffix(filepath.Base(m), ".log")] = m
		}
	}
	return logs
}

// WriteHTML writes the run recorded in the event file events to w as one
// self-contained HTML page: its styles, script, data and pictures are in
// the file, and it loads nothing from the network.
//
// The page shows a summary (outcome, counts, duration, version, command
// line, bench), the step tree (a step that did not pass is opened, with
// expected, received and the console bytes around it), a console
// waterfall (what went out and came in, per console, on one time axis,
// with step boundaries, expect matches and fail_on hits, searchable), a
// timeline of the steps, the periods of each repeat with every: as a
// histogram with percentiles, plots of memory values read repeatedly or
// polled, the pictures with their expect_image regions drawn on them, and
// build results.
//
// The data (steps by the summary rule, the consoles' timelines from the
// log files the sequences name) is embedded as gzip-compressed JSON that
// the page unpacks and draws lazily. It is bounded (see htmlHeadSteps and
// the constants beside it): a run of any length makes a page under 20 MB
// with a few thousand elements, and what is left out is counted on the
// page. It is written as the event file is read, in bounded memory.
func WriteHTML(w io.Writer, events string, opts HTMLOptions) error {
	if err := writeHTML(w, events, opts); err != nil {
		return fmt.Errorf("write html report: %w", err)
	}
	return nil
}

func writeHTML(w io.Writer, events string, opts HTMLOptions) error {
	now := time.Now
	if opts.Now != nil {
		now = opts.Now
	}
	seqs, climbStopped, err := outcomes(opts.Files, events)
	if err != nil {
		return err
	}
	d := &htmlData{events: events, opts: opts}
	return writePage(w, d, htmlTitle(seqs, climbStopped), func() error { return d.write(seqs, climbStopped, opts.Info, now()) })
}

// writePage writes the page around its data: fill writes the data
// through d, whose writer writePage sets, and the pictures d gathered
// follow it.
func writePage(w io.Writer, d *htmlData, title string, fill func() error) error {
	opts := d.opts
	css, err := htmlAssets.ReadFile("html/report.css")
	if err != nil {
		return err
	}
	js, err := htmlAssets.ReadFile("html/report.js")
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	out := &jsonWriter{w: bw}
	out.printf("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
	out.printf("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n")
	// Nothing leaves the file: no request to any network or disk.
	out.printf("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'\">\n")
	out.printf("<meta name=\"generator\" content=\"hilrun %s\">\n", html.EscapeString(opts.Info.Version))
	out.printf("<title>%s</title>\n<style>\n%s</style>\n</head>\n<body>\n", html.EscapeString(title), css)
	out.printf("<div id=\"app\"><p class=\"loading\">Loading the report…</p><noscript>This report needs JavaScript.</noscript></div>\n")
	out.printf("<script type=\"application/octet-stream\" id=\"hilrun-data\" data-encoding=\"gzip+base64\">")
	if out.err != nil {
		return out.err
	}
	b64 := base64.NewEncoder(base64.StdEncoding, bw)
	gz, _ := gzip.NewWriterLevel(b64, gzip.BestCompression)
	dw := bufio.NewWriterSize(gz, 64<<10)
	d.w = &jsonWriter{w: dw}
	if err := fill(); err != nil {
		return err
	}
	for _, step := range []func() error{dw.Flush, gz.Close, b64.Close} {
		if err := step(); err != nil {
			return err
		}
	}
	out.printf("</script>\n")
	for i, p := range d.pictures {
		if err := writePicture(d.opts.Files, out, i, p); err != nil {
			return err
		}
	}
	out.printf("<script>\n%s</script>\n</body>\n</html>\n", js)
	if out.err != nil {
		return out.err
	}
	return bw.Flush()
}

// writePicture embeds the picture at path as base64 in a script element
// the page turns into an image.
func writePicture(fs files.Policy, out *jsonWriter, i int, path string) error {
	typ := "image/png"
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jpg", ".jpeg":
		typ = "image/jpeg"
	case ".gif":
		typ = "image/gif"
	case ".webp":
		typ = "image/webp"
	}
	f, err := fs.Open(path)
	if err != nil {
		// Gone since it was counted: the page says it is missing.
		out.printf("<script type=\"text/plain\" id=\"pic-%d\" data-name=\"%s\" data-missing=\"%s\"></script>\n",
			i, html.EscapeString(filepath.Base(path)), html.EscapeString(err.Error()))
		return out.err
	}
	defer f.Close()
	out.printf("<script type=\"text/plain\" id=\"pic-%d\" data-name=\"%s\" data-type=\"%s\">", i, html.EscapeString(filepath.Base(path)), typ)
	if out.err != nil {
		return out.err
	}
	enc := base64.NewEncoder(base64.StdEncoding, out.w)
	if _, err := io.Copy(enc, io.LimitReader(f, htmlPictureMax)); err != nil {
		return fmt.Errorf("embed the picture %s: %w", path, err)
	}
	if err := enc.Close(); err != nil {
		return err
	}
	out.printf("</script>\n")
	return out.err
}

// htmlTitle is the page's title: the outcome and the sequences.
// stopped says an interrupt ended a climb of a bench's ladder.
func htmlTitle(seqs []results.Sequence, stopped bool) string {
	passed, interrupted := len(seqs) > 0 && !stopped, stopped
	var names []string
	for _, s := range seqs {
		passed = passed && s.Status == runner.Passed
		interrupted = interrupted || s.Status == runner.Interrupted
		if len(names) < 3 {
			names = append(names, cleanLine(s.Name))
		}
	}
	if len(seqs) > len(names) {
		names = append(names, fmt.Sprintf("and %d more", len(seqs)-len(names)))
	}
	word := "FAILED"
	switch {
	case passed:
		word = "PASSED"
	case interrupted:
		word = "INTERRUPTED"
	}
	return word + " " + strings.Join(names, ", ") + " · hilrun report"
}

// stepPrefix starts every step record of an event file, as Stream writes
// them.
var stepPrefix = []byte(`{"type":"step"`)

// outcomes reads the sequences' outcomes from the event file without
// decoding its step records, for what the page says before its data: a
// sequence whose end never came reads as an error, as in the summary rule
// (results.CutShort).
func outcomes(fs files.Policy, events string) (out []results.Sequence, climbStopped bool, err error) {
	f, err := fs.Open(events)
	if err != nil {
		return nil, false, fmt.Errorf("read the event stream: %w", err)
	}
	defer f.Close()
	br := bufio.NewReaderSize(f, 64<<10)
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line) == 0 && bytes.HasPrefix(chunk, stepPrefix) {
			// A step: skip to the end of its line.
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
		} else {
			line = append(line, chunk...)
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
			var r results.Record
			if err == nil && json.Unmarshal(line, &r) == nil {
				switch {
				case r.Type == results.RecordRecovery && r.Recovery != nil:
					// An interrupt ended a climb of a bench's ladder:
					// the run stopped between sequences.
					climbStopped = climbStopped || r.Recovery.Interrupted
				case r.Sequence == nil:
				case r.Type == results.RecordStart:
					s := *r.Sequence
					s.Status, s.Error = runner.Errored, results.CutShort
					out = append(out, s)
				case r.Type == results.RecordEnd:
					if n := len(out); n > 0 {
						out[n-1] = *r.Sequence
					}
				}
			}
			line = line[:0]
		}
		if errors.Is(err, io.EOF) {
			return out, climbStopped, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("read the event stream %s: %w", events, err)
		}
	}
}

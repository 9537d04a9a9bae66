package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/results"
)

// consoleRecord is one line of a console's timeline as the page shows it:
// [ms since the sequence started, dir, stream offset, bytes, text].
type consoleRecord struct {
	ms   float64
	dir  string
	off  int64
	n    int
	text string
}

func (r *consoleRecord) MarshalJSON() ([]byte, error) {
	return json.Marshal([]any{math.Round(r.ms*1000) / 1000, r.dir, r.off, r.n, r.text})
}

// timelineLine is a line of a console's timeline file (package serialx).
type timelineLine struct {
	T      time.Time `json:"t"`
	Dir    string    `json:"dir"`
	Off    int64     `json:"off"`
	N      int       `json:"n"`
	Data   string    `json:"data"`
	Hex    string    `json:"hex"`
	Event  string    `json:"event"`
	Detail string    `json:"detail"`
}

// console writes one console of the sequence: its counts over the whole
// timeline, the records at its start and end, the bytes around the steps
// that did not pass, and the expect matches in it. Without a timeline (no
// log folder), tr gives what the runner kept of the console.
func (d *htmlData) console(name, logPath string, tr *results.Transcript) {
	s := d.seq
	d.printf(`{"name":`)
	d.value(name)
	if tr != nil {
		text, trunc := htmlText(tr.Data, htmlConsoleText)
		d.printf(`,"transcript":`)
		d.value(text)
		d.printf(`,"truncated":%d}`, tr.Truncated+int64(trunc))
		return
	}
	d.printf(`,"log":`)
	d.value(filepath.Base(logPath))
	raw, err := d.opts.Files.Open(logPath)
	if err != nil {
		d.printf(`,"error":`)
		d.value(fmt.Sprintf("read the console log: %v", err))
		d.printf(`}`)
		return
	}
	defer raw.Close()
	tlPath := strings.TrimSuffix(logPath, ".log") + ".timeline.jsonl"
	tl, err := d.opts.Files.Open(tlPath)
	if err != nil {
		// The log without its timeline: its text, without times.
		data, _ := io.ReadAll(io.LimitReader(raw, htmlConsoleText+1))
		text, trunc := htmlText(data, htmlConsoleText)
		d.printf(`,"transcript":`)
		d.value(text)
		d.printf(`,"truncated":%d,"error":`, trunc)
		d.value(fmt.Sprintf("read the console timeline: %v", err))
		d.printf(`}`)
		return
	}
	defer tl.Close()

	c := newTimelineScan(raw, s.contexts)
	err = c.read(tl, s.startedAt)
	d.printf(`,"counts":{"tx":%d,"rx":%d,"events":%d,"tx_bytes":%d,"rx_bytes":%d,"unreadable":%d}`, c.tx, c.rx, c.events, c.txBytes, c.rxBytes, c.skipped)
	if err != nil && !errors.Is(err, bufio.ErrTooLong) {
		d.printf(`,"error":`)
		d.value(fmt.Sprintf("read the console timeline: %v", err))
	}
	d.printf(`,"head":`)
	d.value(c.head)
	tail := c.tail()
	d.printf(`,"gap":{"records":%d,"bytes":%d},"tail":`, c.gap, c.gapBytes)
	d.value(tail)
	d.printf(`,"text_left_out":%t,"contexts":[`, c.textBudget <= 0)
	d.consoleContexts(c)
	d.printf(`],"expects":[`)
	d.consoleExpects(c.curOff)
	d.printf(`]}`)
}

// consoleContexts writes the console bytes around each step window of c:
// up to htmlContextBefore bytes before the step started and what came
// while it ran, htmlContextBytes in all.
func (d *htmlData) consoleContexts(c *timelineScan) {
	for i, w := range c.windows {
		if i > 0 {
			d.printf(",")
		}
		from := max(c.ctxFrom[i]-htmlContextBefore, 0)
		to := max(c.ctxTo[i], c.ctxFrom[i])
		if to-from > htmlContextBytes {
			from = to - htmlContextBytes
		}
		buf := make([]byte, to-from)
		m, _ := c.raw.ReadAt(buf, from)
		before := int(min(max(c.ctxFrom[i]-from, 0), int64(m)))
		b1, _ := htmlText(buf[:before], before)
		b2, _ := htmlText(buf[before:m], m-before)
		d.printf(`{"path":`)
		d.value(w.path)
		d.printf(`,"off":%d,"before":`, from)
		d.value(b1)
		d.printf(`,"during":`)
		d.value(b2)
		d.printf(`}`)
	}
}

// consoleExpects writes the sequence's expect matches that lie within
// the console's stream, which ends at offset end.
func (d *htmlData) consoleExpects(end int64) {
	n := 0
	for _, e := range d.seq.expects {
		if e.Offset+int64(e.Len) > end && end > 0 {
			continue // not this console's
		}
		if n > 0 {
			d.printf(",")
		}
		n++
		d.printf(`[%d,%d,`, e.Offset, e.Len)
		d.value(e.Path)
		d.printf(`]`)
	}
}

// htmlText turns console bytes into text for the page: valid UTF-8 is
// kept, other bytes and controls other than tab, CR and LF are escaped as
// the other reports do. It returns the text and the bytes left out past max.
func htmlText(b []byte, limit int) (string, int) {
	cut := 0
	if len(b) > limit {
		cut = len(b) - limit
		b = b[:limit]
	}
	var sb strings.Builder
	for len(b) > 0 {
		i := bytes.IndexFunc(b, func(r rune) bool {
			return r == 0xFFFD || (r < 0x20 && r != '\t' && r != '\r' && r != '\n') || r == 0x7f
		})
		if i < 0 {
			sb.Write(b)
			break
		}
		sb.Write(b[:i])
		b = b[i:]
		sb.WriteString(cleanText(string(b[:1])))
		b = b[1:]
	}
	return sb.String(), cut
}

package report

import (
	"bufio"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"time"

	"github.com/hilrun/hilrun/pkg/results"
)

// timelineScan is what reading one console's timeline gathers for the
// page: its counts, the records at its start and end, and where in the
// console's stream each step window began and ended.
type timelineScan struct {
	raw io.ReaderAt // the console log, for the text of received bytes
	// textBudget is how many more bytes of the log the records may show.
	textBudget int

	tx, rx, events, skipped int
	txBytes, rxBytes        int64
	head                    []*consoleRecord
	ring                    []*consoleRecord // the last records, a ring
	ringNext                int
	gap, gapBytes           int   // records and bytes left out between head and ring
	curOff                  int64 // the stream offset past the last bytes received

	windows        []stepWindow // the step windows, by start
	ctxFrom, ctxTo []int64      // each window's stream offsets
	started, ended []bool
	lo             int // the first window not ended
}

// newTimelineScan starts reading a console whose log is raw for the step
// windows contexts.
func newTimelineScan(raw io.ReaderAt, contexts []stepWindow) *timelineScan {
	windows := slices.Clone(contexts)
	sort.SliceStable(windows, func(a, b int) bool { return windows[a].start < windows[b].start })
	return &timelineScan{
		raw:        raw,
		textBudget: htmlConsoleText,
		ring:       make([]*consoleRecord, 0, 64),
		windows:    windows,
		ctxFrom:    make([]int64, len(windows)),
		ctxTo:      make([]int64, len(windows)),
		started:    make([]bool, len(windows)),
		ended:      make([]bool, len(windows)),
	}
}

// readText returns the text of the n bytes received at stream offset off,
// as far as the budget and htmlChunkText allow.
func (c *timelineScan) readText(off int64, n int) string {
	if c.textBudget <= 0 {
		return ""
	}
	k := min(n, htmlChunkText, c.textBudget)
	buf := make([]byte, k)
	m, _ := c.raw.ReadAt(buf, off)
	text, _ := htmlText(buf[:m], k)
	if m < n {
		text += fmt.Sprintf("…(%d more bytes)", n-m)
	}
	c.textBudget -= m
	return text
}

// read reads the timeline tl of a sequence started at startedAt. It
// returns the error that ended the reading, if any; bufio.ErrTooLong
// when the last line was too long to read.
func (c *timelineScan) read(tl io.Reader, startedAt time.Time) error {
	sc := bufio.NewScanner(tl)
	sc.Buffer(make([]byte, 64<<10), timelineLineMax)
	for {
		if !sc.Scan() {
			if errors.Is(sc.Err(), bufio.ErrTooLong) {
				// Skip the rest of a line too long to show.
				c.skipped++
				br := bufio.NewReader(tl)
				if _, err := br.ReadBytes('\n'); err != nil {
					break
				}
				sc = bufio.NewScanner(br)
				sc.Buffer(make([]byte, 64<<10), timelineLineMax)
				continue
			}
			break
		}
		var l timelineLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			c.skipped++
			continue
		}
		at := l.T.Sub(startedAt)
		c.markWindows(at)
		c.keep(c.record(&l, at))
	}
	for i := range c.windows {
		if !c.started[i] {
			c.ctxFrom[i] = c.curOff
		}
		if !c.ended[i] {
			c.ctxTo[i] = c.curOff
		}
	}
	return sc.Err()
}

// markWindows notes the stream offset where each step window starts and
// ends, for a line at at since the sequence started.
func (c *timelineScan) markWindows(at time.Duration) {
	for c.lo < len(c.windows) && c.ended[c.lo] {
		c.lo++
	}
	for i := c.lo; i < len(c.windows); i++ {
		w := c.windows[i]
		if !c.started[i] && at >= w.start {
			c.started[i], c.ctxFrom[i] = true, c.curOff
		}
		if c.started[i] && !c.ended[i] && at > w.end {
			c.ended[i], c.ctxTo[i] = true, c.curOff
		}
		if !c.started[i] {
			break
		}
	}
}

// record counts the timeline line l and returns its record. A received
// chunk's text is read later, only if the record is shown.
func (c *timelineScan) record(l *timelineLine, at time.Duration) *consoleRecord {
	r := &consoleRecord{ms: float64(at) / float64(time.Millisecond), dir: l.Dir, off: l.Off, n: l.N}
	switch l.Dir {
	case "tx":
		c.tx++
		c.txBytes += int64(l.N)
		// The bytes sent, as text or hex in the timeline, shown with
		// line endings and other control bytes escaped.
		sent := []byte(l.Data)
		if l.Hex != "" {
			if b, err := hex.DecodeString(l.Hex); err == nil {
				sent = b
			}
		}
		r.text = results.QuoteBytes(sent)
	case "rx":
		c.rx++
		c.rxBytes += int64(l.N)
		c.curOff = l.Off + int64(l.N)
	default:
		c.events++
		r.text = l.Event
		if l.Detail != "" {
			r.text += " " + l.Detail
		}
	}
	return r
}

// keep keeps r in the head while it has room, else in the ring of the
// last records, counting the record it pushes out as left out.
func (c *timelineScan) keep(r *consoleRecord) {
	if len(c.head) < htmlHeadRecords {
		if r.dir == "rx" {
			r.text = c.readText(r.off, r.n)
		}
		c.head = append(c.head, r)
		return
	}
	if len(c.ring) < htmlTailRecords {
		c.ring = append(c.ring, r)
		return
	}
	old := c.ring[c.ringNext]
	c.gap++
	c.gapBytes += old.n
	c.ring[c.ringNext] = r
	c.ringNext = (c.ringNext + 1) % htmlTailRecords
}

// tail returns the last records, oldest first, with their texts.
func (c *timelineScan) tail() []*consoleRecord {
	tail := append(c.ring[c.ringNext:len(c.ring):len(c.ring)], c.ring[:c.ringNext]...)
	// The tail's texts are read now, from the end back, so that the last
	// bytes before the run ended are shown first when the budget runs out.
	for i := len(tail) - 1; i >= 0; i-- {
		if tail[i].dir == "rx" {
			tail[i].text = c.readText(tail[i].off, tail[i].n)
		}
	}
	return tail
}

package report

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/files"
)

// consoleCursor walks a console's timeline forward in time, to find what
// the console received during each test case.
type consoleCursor struct {
	name, path string
	raw        *os.File
	tl         *os.File
	sc         *bufio.Scanner
	off        int64 // the stream offset reached
	pending    *timelineLine
	done       bool
}

func openConsoleCursor(fs files.Policy, name, logPath string) *consoleCursor {
	raw, err := fs.Open(logPath)
	if err != nil {
		return nil
	}
	tl, err := fs.Open(strings.TrimSuffix(logPath, ".log") + ".timeline.jsonl")
	if err != nil {
		raw.Close()
		return nil
	}
	sc := bufio.NewScanner(tl)
	sc.Buffer(make([]byte, 64<<10), timelineLineMax)
	return &consoleCursor{name: name, path: logPath, raw: raw, tl: tl, sc: sc}
}

// advance moves past the received chunks that arrived before t.
func (c *consoleCursor) advance(t time.Time) {
	for !c.done {
		if c.pending == nil {
			if !c.sc.Scan() {
				c.done = true
				return
			}
			var l timelineLine
			if json.Unmarshal(c.sc.Bytes(), &l) != nil || l.Dir != "rx" {
				continue
			}
			c.pending = &l
		}
		if !c.pending.T.Before(t) {
			return
		}
		c.off = c.pending.Off + int64(c.pending.N)
		c.pending = nil
	}
}

// window returns the bytes received from start to stop (the last
// allureConsoleBytes of them) and how many before those were cut.
func (c *consoleCursor) window(start, stop time.Time) ([]byte, int64, error) {
	c.advance(start)
	from := c.off
	c.advance(stop)
	to := c.off
	var cut int64
	if to-from > allureConsoleBytes {
		cut = to - from - allureConsoleBytes
		from = to - allureConsoleBytes
	}
	buf := make([]byte, to-from)
	n, err := c.raw.ReadAt(buf, from)
	if err != nil && err != io.EOF {
		return nil, 0, err
	}
	return buf[:n], cut, nil
}

func (c *consoleCursor) close() {
	c.raw.Close()
	c.tl.Close()
}

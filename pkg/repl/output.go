package repl

import (
	"bytes"
	"sync"
	"time"

	"github.com/hilrun/hilrun/pkg/stream"
)

const (
	// partialAfter is how long an unfinished line (a prompt) waits for the
	// rest before it is shown anyway.
	partialAfter = 150 * time.Millisecond
	// keepBytes bounds the output each console keeps for :record --expects.
	keepBytes = 1 << 20
	dim       = "\x1b[2m"
	reset     = "\x1b[0m"
)

// output shows what one console prints, line by line, labelled and dimmed
// so it stands apart from what the user types and from hilrun's messages.
// It also keeps the recent output by offset, to find replies for :record.
type output struct {
	s    *Session
	name string

	mu      sync.Mutex
	partial []byte
	timer   *time.Timer
	kept    []byte
	base    int64 // offset of kept[0]
}

func (o *output) receive(off int64, p []byte) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.kept) == 0 {
		o.base = off
	}
	o.kept = append(o.kept, p...)
	if len(o.kept) > 2*keepBytes {
		over := len(o.kept) - keepBytes
		o.kept = append(o.kept[:0], o.kept[over:]...)
		o.base += int64(over)
	}
	if o.s.isRaw() {
		o.s.out.Write(p)
		return
	}
	o.partial = append(o.partial, p...)
	for {
		i := bytes.IndexByte(o.partial, '\n')
		if i < 0 {
			break
		}
		o.line(o.partial[:i])
		o.partial = o.partial[i+1:]
	}
	if len(o.partial) > 0 {
		if o.timer == nil {
			o.timer = time.AfterFunc(partialAfter, o.flush)
		} else {
			o.timer.Reset(partialAfter)
		}
	}
}

func (o *output) line(l []byte) {
	l = bytes.TrimRight(l, "\r")
	o.s.t.Write([]byte(o.s.dim + o.name + "│ " + stream.Printable(l) + o.s.reset + "\n"))
}

// flush shows an unfinished line.
func (o *output) flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.partial) > 0 {
		o.line(o.partial)
		o.partial = nil
	}
}

// since returns what the console printed from offset off on.
func (o *output) since(off int64) []byte {
	o.mu.Lock()
	defer o.mu.Unlock()
	i := off - o.base
	if i < 0 || i > int64(len(o.kept)) {
		return nil
	}
	return append([]byte(nil), o.kept[i:]...)
}

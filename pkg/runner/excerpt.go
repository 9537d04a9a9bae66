package runner

import (
	"bytes"

	"github.com/hilrun/hilrun/pkg/stream"
)

// failOnHit is the cause a run is cancelled with when a sequence's fail_on
// pattern appears on a console while a step runs.
type failOnHit struct {
	console string
	hit     *stream.FailOnError
}

func (e *failOnHit) Error() string { return e.console + ": " + e.hit.Error() }
func (e *failOnHit) Unwrap() error { return e.hit }

// reader is an optional ability of a console: reading what it retains from
// an offset on (serialx.Console has it). Without it, an excerpt is the
// console's tail.
type reader interface {
	Read(from int64, max int) (data []byte, start, next int64)
}

// Excerpt bounds: lines shown before the line of a fail_on match and
// after it (with the match's line, fewer than the 10 lines a console
// report shows), and bytes read on each side.
const (
	excerptBefore = 2
	excerptAfter  = 6
	excerptBytes  = 1024
)

// excerpt is the output of c around offset off, where a fail_on pattern
// matched: a few lines before the match and the lines after it, so a
// report shows the crash dump rather than the reboot that followed it,
// which the tail would show.
func excerpt(c Console, off int64) string {
	var rd reader
	for cur := c; cur != nil; {
		if x, ok := cur.(reader); ok {
			rd = x
			break
		}
		u, ok := cur.(interface{ Unwrap() Console })
		if !ok {
			break
		}
		cur = u.Unwrap()
	}
	if rd == nil {
		return stream.Printable(c.Tail(10, 2048))
	}
	from := max(off-excerptBytes, 0)
	data, start, _ := rd.Read(from, 2*excerptBytes)
	at := int(min(max(off-start, 0), int64(len(data))))
	before, after := data[:at], data[at:]
	// The match's line and excerptBefore lines before it; a line that
	// what was read cuts off is left out, unless it is the match's own.
	lo := len(before)
	for n := 0; n <= excerptBefore; n++ {
		i := bytes.LastIndexByte(before[:lo], '\n')
		if i < 0 {
			if start == 0 || n == 0 {
				lo = -1
			}
			break
		}
		lo = i
	}
	lo++
	hi := 0
	for n := 0; n <= excerptAfter && hi < len(after); n++ {
		i := bytes.IndexByte(after[hi:], '\n')
		if i < 0 {
			hi = len(after)
			break
		}
		hi += i + 1
	}
	return stream.Printable(append(bytes.Clone(before[lo:]), after[:hi]...))
}

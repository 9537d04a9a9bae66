package build

import (
	"bytes"
	"io"
	"strings"
	"sync"
)

// maxLine bounds a line kept for classification; a longer one is cut
// there, the rest treated as a line of its own.
const maxLine = 64 << 10

// sink is where a command's output goes: split into lines for the
// classifier, the size scanner, the tail and Progress, and copied whole to
// the log file.
type sink struct {
	mu       sync.Mutex
	partial  []byte
	class    classifier
	sizes    sizeScanner
	tail     tail
	progress func(string)
	log      io.WriteCloser
	logErr   error
}

func newSink(opts Options) *sink {
	nLines, nBytes := opts.TailLines, opts.TailBytes
	if nLines <= 0 {
		nLines = 40
	}
	if nBytes <= 0 {
		nBytes = 8 << 10
	}
	return &sink{tail: tail{maxLines: nLines, maxBytes: nBytes}, progress: opts.Progress}
}

// Write takes output in any pieces. It never fails: a broken log file must
// not stop the build, so its error is kept for the result.
func (s *sink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.log != nil && s.logErr == nil {
		_, s.logErr = s.log.Write(p)
	}
	if len(p) == 0 {
		return 0, nil
	}
	rest := p
	if n := len(s.partial); n > 0 && s.partial[n-1] == '\r' && rest[0] != '\n' {
		s.line(string(s.partial[:n-1]))
		s.partial = s.partial[:0]
	}
	for len(rest) > 0 {
		i := bytes.IndexAny(rest, "\r\n")
		if i < 0 {
			s.partial = append(s.partial, rest...)
			if len(s.partial) >= maxLine {
				s.line(string(s.partial))
				s.partial = s.partial[:0]
			}
			break
		}
		s.partial = append(s.partial, rest[:i]...)
		// "\r\n" ends one line; a lone "\r" (a progress bar redrawing
		// itself) ends one too.
		skip := 1
		if rest[i] == '\r' && i+1 < len(rest) && rest[i+1] == '\n' {
			skip = 2
		}
		if rest[i] == '\r' && i+1 == len(rest) {
			// "\r" at the end of a write may be half of "\r\n"; keep it.
			s.partial = append(s.partial, '\r')
			break
		}
		s.line(strings.TrimSuffix(string(s.partial), "\r"))
		s.partial = s.partial[:0]
		rest = rest[i+skip:]
	}
	return len(p), nil
}

// flush ends the last line when the output did not.
func (s *sink) flush() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.partial) > 0 {
		s.line(strings.TrimSuffix(string(s.partial), "\r"))
		s.partial = nil
	}
}

func (s *sink) line(l string) {
	s.class.feed(l)
	s.sizes.feed(l)
	s.tail.add(l)
	if s.progress != nil {
		s.progress(l)
	}
}

// tail keeps the last lines of output within a line and a byte budget.
type tail struct {
	maxLines, maxBytes int
	lines              []string
	bytes              int
}

func (t *tail) add(l string) {
	// A line longer than the whole budget keeps its end, so that output
	// never leaves the tail empty.
	if keep := max(t.maxBytes-1, 1); len(l) > keep {
		l = l[len(l)-keep:]
	}
	t.lines = append(t.lines, l)
	t.bytes += len(l) + 1
	for len(t.lines) > t.maxLines || t.bytes > t.maxBytes {
		t.bytes -= len(t.lines[0]) + 1
		t.lines[0] = ""
		t.lines = t.lines[1:]
	}
}

// String is the kept lines, each ended by "\n".
func (t *tail) String() string {
	if len(t.lines) == 0 {
		return ""
	}
	return strings.Join(t.lines, "\n") + "\n"
}

package serialx

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/hilrun/hilrun/pkg/stream"
)

// consoleLog writes a console's raw log and timeline. Writes go straight to
// the files, without user-space buffering, so a crash or os.Exit loses
// nothing that was received.
type consoleLog struct {
	rawPath, tlPath string
	opened          time.Time

	mu      sync.Mutex
	raw, tl *os.File
	line    []byte
	err     error // the first write error, reported by Stats
}

// LogName turns a console name into the base of its log files' names
// (NAME.log, NAME.timeline.jsonl): path separators and unusual characters
// become '_'.
func LogName(name string) string {
	b := []byte(name)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '-', c == '_', c == '.':
		default:
			b[i] = '_'
		}
	}
	s := string(b)
	if s == "" || s == "." || s == ".." {
		s = "console"
	}
	return s
}

func openLog(dir, name string, opened time.Time) (*consoleLog, error) {
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return nil, fmt.Errorf("create log directory: %w", err)
	}
	l := &consoleLog{
		rawPath: filepath.Join(dir, LogName(name)+".log"),
		tlPath:  filepath.Join(dir, LogName(name)+".timeline.jsonl"),
		opened:  opened,
	}
	var err error
	if l.raw, err = os.Create(l.rawPath); err != nil {
		return nil, fmt.Errorf("create console log: %w", err)
	}
	if l.tl, err = os.Create(l.tlPath); err != nil {
		l.raw.Close()
		return nil, fmt.Errorf("create console timeline: %w", err)
	}
	return l, nil
}

// start begins a timeline line with "t", "us", "dir", "off" and "n".
func (l *consoleLog) start(at time.Time, dir string, off int64, n int) []byte {
	b := l.line[:0]
	b = append(b, `{"t":"`...)
	b = at.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","us":`...)
	b = strconv.AppendInt(b, at.Sub(l.opened).Microseconds(), 10)
	b = append(b, `,"dir":"`...)
	b = append(b, dir...)
	b = append(b, `","off":`...)
	b = strconv.AppendInt(b, off, 10)
	b = append(b, `,"n":`...)
	b = strconv.AppendInt(b, int64(n), 10)
	return b
}

func (l *consoleLog) finish(b []byte) {
	b = append(b, "}\n"...)
	l.line = b
	if _, err := l.tl.Write(b); err != nil && l.err == nil {
		l.err = fmt.Errorf("write %s: %w", l.tlPath, err)
	}
}

// rx records received bytes p at stream offset off.
func (l *consoleLog) rx(at time.Time, off int64, p []byte) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, err := l.raw.Write(p); err != nil && l.err == nil {
		l.err = fmt.Errorf("write %s: %w", l.rawPath, err)
	}
	l.finish(l.start(at, "rx", off, len(p)))
}

// tx records bytes p sent when the stream was at offset off.
func (l *consoleLog) tx(at time.Time, off int64, p []byte) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.start(at, "tx", off, len(p))
	b = append(b, `,"data":`...)
	b = appendJSONString(b, stream.Quote(p))
	l.finish(b)
}

// event records something that happened to the port: "disconnected",
// "reconnected", "write_error".
func (l *consoleLog) event(at time.Time, off int64, name, detail string) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	b := l.start(at, "event", off, 0)
	b = append(b, `,"event":`...)
	b = appendJSONString(b, name)
	if detail != "" {
		b = append(b, `,"detail":`...)
		b = appendJSONString(b, detail)
	}
	l.finish(b)
}

func appendJSONString(b []byte, s string) []byte {
	q, _ := json.Marshal(s) // a string always marshals
	return append(b, q...)
}

func (l *consoleLog) writeErr() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

func (l *consoleLog) close() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return errors.Join(l.raw.Close(), l.tl.Close())
}

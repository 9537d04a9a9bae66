package serialx

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/hilrun/hilrun/pkg/logfile"
)

// consoleLog writes a console's raw log and timeline. Writes go straight to
// the files, without user-space buffering, so a crash or os.Exit loses
// nothing that was received. A write that fails (a full disk) does not stop
// the console: the bytes it could not write are counted, later writes are
// still tried, and LogErr says what was lost.
type consoleLog struct {
	opened time.Time
	// warn, if set, is told of the first write error as it happens.
	warn func(msg string)

	mu      sync.Mutex
	raw, tl *logfile.File
	line    []byte
}

// loss says what a log file lacks, as a LogWriteError, or is nil.
func loss(lf *logfile.File) error {
	e := lf.Loss()
	if e == nil {
		return nil
	}
	return &LogWriteError{File: e.File, What: e.What, Lost: e.Lost, Total: e.Total, Err: e.Err}
}

// ErrLogWrite is wrapped by the error of a console whose raw log or
// timeline could not be written in full: a bench error, as the record of
// the run is incomplete.
var ErrLogWrite = errors.New("console log incomplete")

// LogWriteError says which log file lost bytes and how many.
type LogWriteError struct {
	File string // path of the log file
	What string // "console log" or "console timeline"
	// Lost counts the bytes that could not be written, of Total meant
	// for the file.
	Lost, Total int64
	Err         error // the first write error
}

func (e *LogWriteError) Error() string {
	return fmt.Sprintf("%s %s: %d of %d bytes lost: %v", e.What, e.File, e.Lost, e.Total, logfile.Cause(e.Err))
}

// Unwrap returns ErrLogWrite and the write error.
func (e *LogWriteError) Unwrap() []error { return []error{ErrLogWrite, e.Err} }

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
	l := &consoleLog{opened: opened}
	var err error
	if l.raw, err = logfile.Create("console log", filepath.Join(dir, LogName(name)+".log")); err != nil {
		return nil, fmt.Errorf("create console log: %w", err)
	}
	if l.tl, err = logfile.Create("console timeline", filepath.Join(dir, LogName(name)+".timeline.jsonl")); err != nil {
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
	if l.tl.Put(b) {
		l.warnLoss(l.tl)
	}
}

// warnLoss tells of a log file's first write error as it happens.
func (l *consoleLog) warnLoss(lf *logfile.File) {
	if l.warn != nil {
		l.warn(fmt.Sprintf("%s %s: %v: what follows is lost; the run goes on, and will end with a bench error", lf.What, lf.Path, lf.Err()))
	}
}

// rx records received bytes p at stream offset off.
func (l *consoleLog) rx(at time.Time, off int64, p []byte) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.raw.Put(p) {
		l.warnLoss(l.raw)
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
	// The bytes are encoded once: as a JSON string when they are UTF-8,
	// which JSON holds exactly, else in hex, since a JSON string cannot
	// hold an invalid byte.
	if utf8.Valid(p) {
		b = append(b, `,"data":`...)
		b = appendJSONString(b, string(p))
	} else {
		b = append(b, `,"hex":"`...)
		b = hex.AppendEncode(b, p)
		b = append(b, '"')
	}
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

// writeErr says what the log files lost, or is nil.
func (l *consoleLog) writeErr() error {
	if l == nil {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return errors.Join(loss(l.raw), loss(l.tl))
}

// close closes the log files. Some file systems (NFS) report a failed
// write only then: it counts as a loss, which writeErr reports.
func (l *consoleLog) close() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.raw.Close()
	l.tl.Close()
}

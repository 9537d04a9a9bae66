package results

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
)

// EventFile is the name of the event file in a run's folder.
const EventFile = "events.jsonl"

// flushInterval bounds how long a finished step may wait in the Stream's
// buffer before it reaches the file.
const flushInterval = 200 * time.Millisecond

// Stream is a runner.Sink that writes the run's events to an event file as
// they happen: one JSON line (a Record) per sequence start, finished step and
// sequence end. Console output is not recorded: the console logs hold it.
//
// The first write error stops the Stream; Err returns it, and the reports
// written from the file then lack what came after. Its methods are safe for
// concurrent use.
type Stream struct {
	path string

	mu   sync.Mutex
	f    *os.File
	w    *bufio.Writer
	enc  *json.Encoder
	seq  int
	last time.Time
	err  error
}

var _ runner.Sink = (*Stream)(nil)

// Create creates the event file at path, and its folder if needed,
// replacing a file that is there.
func Create(path string) (*Stream, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create the event stream folder: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create the event stream: %w", err)
	}
	s := &Stream{path: path, f: f, w: bufio.NewWriterSize(f, 64<<10), seq: -1, last: time.Now()}
	s.enc = json.NewEncoder(s.w)
	s.enc.SetEscapeHTML(false)
	return s, nil
}

// Path is the event file's path.
func (s *Stream) Path() string { return s.path }

// Event records e: a sequence start or end, or a finished step.
func (s *Stream) Event(e runner.Event) {
	switch e.Type {
	case runner.SequenceStarted:
		s.mu.Lock()
		s.seq++
		s.mu.Unlock()
		s.write(Record{Type: RecordStart, Sequence: &Sequence{Name: e.Sequence, File: e.File, StartedAt: e.Time.Add(-e.Offset)}})
	case runner.StepFinished:
		if e.Step != nil {
			st := StepFrom(e.Step)
			s.write(Record{Type: RecordStep, Step: &st})
		}
	case runner.SequenceFinished:
		if e.Result != nil {
			seq := SequenceFrom(e.Result)
			s.write(Record{Type: RecordEnd, Sequence: &seq})
			s.mu.Lock()
			s.flushLocked()
			s.mu.Unlock()
		}
	}
}

func (s *Stream) write(r Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil || s.f == nil {
		return
	}
	r.Seq = max(s.seq, 0)
	if err := s.enc.Encode(r); err != nil {
		s.err = fmt.Errorf("write the event stream %s: %w", s.path, err)
		return
	}
	if now := time.Now(); now.Sub(s.last) >= flushInterval {
		s.last = now
		s.flushLocked()
	}
}

func (s *Stream) flushLocked() {
	if s.err != nil || s.w == nil {
		return
	}
	if err := s.w.Flush(); err != nil {
		s.err = fmt.Errorf("write the event stream %s: %w", s.path, err)
	}
}

// Err returns the first error writing the event file, or nil.
func (s *Stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Close flushes and closes the event file; it returns Err or the error
// closing it. Close is idempotent.
func (s *Stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return s.err
	}
	s.flushLocked()
	if err := s.f.Close(); err != nil && s.err == nil {
		s.err = fmt.Errorf("close the event stream %s: %w", s.path, err)
	}
	s.f = nil
	return s.err
}

// ErrTruncated means the event file ends inside a record, as when hilrun
// was killed or the disk filled up while writing it.
var ErrTruncated = errors.New("the event stream ends inside a record")

// Read calls fn for each record of the event file at path, in order. Numbers
// in Saved and Data come back as json.Number, so 64-bit values keep every
// bit. It stops at fn's first error and returns it; a file that ends inside
// a record gives ErrTruncated after the records before it.
func Read(path string, fn func(*Record) error) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("read the event stream: %w", err)
	}
	defer f.Close()
	dec := json.NewDecoder(bufio.NewReaderSize(f, 64<<10))
	dec.UseNumber()
	for {
		var r Record
		err := dec.Decode(&r)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("read %s: %w", path, ErrTruncated)
		}
		if err != nil {
			return fmt.Errorf("read the event stream %s: %w", path, err)
		}
		if err := fn(&r); err != nil {
			return err
		}
	}
}

package results

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
)

// EventFile is the name of the event file in a run's folder.
const EventFile = "events.jsonl"

// flushInterval bounds how long a finished step may wait in the Stream
// before it reaches the file.
const flushInterval = 200 * time.Millisecond

// maxPending bounds how many records wait to be encoded.
const maxPending = 1024

// Stream is a runner.Sink that writes the run's events to an event file as
// they happen: one JSON line (a Record) per sequence start, finished step and
// sequence end. Console output is not recorded: the console logs hold it.
//
// Records reach the file whole: when a write fails (a full disk), the file
// is cut back to its last whole record. With Spare set, the stream then goes
// on in a spare file that starts with a copy of what the event file holds,
// so the reports lack nothing; Incomplete says what the event file lost.
// Without a spare, or when the spare fails too, the stream stops; Err
// returns why, and the reports lack what came after. Its methods are safe
// for concurrent use.
type Stream struct {
	// Spare, when set, returns the path of a file (on another disk, such
	// as a private temporary folder) to go on in when the event file
	// cannot be written. It is called at most once.
	Spare func() (string, error)

	path string // the file the reports read: the event file or its spare

	// pmu guards the records not yet encoded; mu, taken before pmu when
	// both are held, guards the rest.
	pmu     sync.Mutex
	pending []Record
	spare   []Record // a drained pending slice, for reuse
	size    int      // about how many bytes pending holds
	seq     int
	// starts counts the steps started; oldest is what it was when the
	// first record pending came (see stepStarted).
	starts, oldest uint64
	// timer drains pending at the latest flushInterval after a record
	// came; armed says it will.
	timer *time.Timer
	armed bool

	mu   sync.Mutex
	f    *os.File
	buf  bytes.Buffer
	ends []int // where each record in buf ends
	off  int64 // the bytes of whole records in f
	enc  *json.Encoder
	err  error
	// lost says what the event file (not its spare) lacks.
	lost error
}

var _ runner.Sink = (*Stream)(nil)

// flushSize is how much the Stream buffers before it writes.
const flushSize = 64 << 10

// Create creates the event file at path, and its folder if needed,
// replacing a file that is there.
func Create(path string) (*Stream, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
		return nil, fmt.Errorf("create the event stream folder: %w", err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create the event stream: %w", err)
	}
	s := &Stream{path: path, f: f, seq: -1}
	s.enc = json.NewEncoder(&s.buf)
	s.enc.SetEscapeHTML(false)
	return s, nil
}

// Path is the file the reports read: the event file, or after a failed
// write the spare that holds the whole stream.
func (s *Stream) Path() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.path
}

// Event records e: a sequence start or end, or a finished step.
//
// A finished step is not encoded while the runner waits for Event to
// return, off the path from one step to the next: records wait until the
// run waits for its device (Idle), and at the latest until the step after
// the next one starts, when its StepStarted event writes them before it
// returns. So a step's record is in the file (written to the kernel)
// before the step after next does anything, however fast the steps are;
// a step that runs long without waiting has the records before it
// written within flushInterval, on another goroutine. A sequence's end is
// written before Event returns.
func (s *Stream) Event(e runner.Event) {
	if e.Type == runner.StepStarted {
		s.stepStarted()
		return
	}
	if r, ok := recordOf(e); ok {
		s.add(r)
	}
}

// stepStarted counts a step started and writes the records that were
// waiting already when the step before it started: those of the steps
// before the previous one.
func (s *Stream) stepStarted() {
	s.pmu.Lock()
	s.starts++
	late := len(s.pending) > 0 && s.oldest+1 < s.starts
	s.pmu.Unlock()
	if late {
		s.drain()
	}
}

// Idle writes the waiting records, as the run waits for its device: the
// encoding and the write then cost its steps nothing. It returns at once
// when a write is under way (the records it does not take are written by
// the next Idle, or when the step after next starts).
func (s *Stream) Idle() {
	s.pmu.Lock()
	n := len(s.pending)
	s.pmu.Unlock()
	if n == 0 || !s.mu.TryLock() {
		return
	}
	defer s.mu.Unlock()
	s.drainLocked()
}

// add numbers r and holds it back, or writes it with those waiting.
func (s *Stream) add(r Record) {
	s.pmu.Lock()
	if r.Type == RecordStart {
		s.seq++
	}
	r.Seq = max(s.seq, 0)
	if s.pending == nil {
		s.pending, s.spare = s.spare[:0], nil
	}
	if len(s.pending) == 0 {
		s.oldest = s.starts
	}
	s.pending = append(s.pending, r)
	s.size += r.approxSize()
	// A sequence's end is written at once; so are records that pile up
	// faster than the drain writes them (4 times its batch), which slows
	// the run down rather than let memory grow.
	now := r.Type == RecordEnd || len(s.pending) >= 4*maxPending || s.size >= 4*flushSize
	soon := len(s.pending) >= maxPending || s.size >= flushSize
	switch {
	case now:
	case soon:
		s.armLocked(0)
	case !s.armed:
		s.armLocked(flushInterval)
	}
	s.pmu.Unlock()
	if now {
		s.drain()
	}
}

// armLocked has the timer drain pending after d; pmu is held. One timer
// serves the whole stream: none is made per record.
func (s *Stream) armLocked(d time.Duration) {
	s.armed = true
	if s.timer == nil {
		s.timer = time.AfterFunc(d, s.fire)
		return
	}
	s.timer.Reset(d)
}

// fire is the timer's: it drains what is pending, if anything (an Idle
// may have written it already).
func (s *Stream) fire() {
	s.pmu.Lock()
	s.armed = false
	n := len(s.pending)
	s.pmu.Unlock()
	if n > 0 {
		s.drain()
	}
}

// drain encodes the waiting records and writes them.
func (s *Stream) drain() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drainLocked()
}

// drainLocked is drain with mu held.
func (s *Stream) drainLocked() {
	s.pmu.Lock()
	recs := s.pending
	if recs == nil {
		s.pmu.Unlock()
		return
	}
	s.pending, s.size = nil, 0
	s.pmu.Unlock()
	for i := range recs {
		s.encodeLocked(&recs[i])
		recs[i] = Record{} // let the step's values go
	}
	s.flushLocked()
	s.pmu.Lock()
	s.spare = recs[:0]
	s.pmu.Unlock()
}

// recordOf is the record of the event file for e, without its sequence
// number; false for the events the file does not record.
func recordOf(e runner.Event) (Record, bool) {
	switch e.Type {
	case runner.SequenceStarted:
		return Record{Type: RecordStart, Sequence: &Sequence{Name: e.Sequence, File: e.File, StartedAt: e.Time.Add(-e.Offset)}}, true
	case runner.StepFinished:
		if e.Step != nil {
			st := StepFrom(e.Step)
			return Record{Type: RecordStep, Step: &st}, true
		}
	case runner.AttemptFinished:
		if e.Attempt != nil {
			a := AttemptFrom(e.Attempt)
			return Record{Type: RecordAttempt, Attempt: &a}, true
		}
	case runner.SequenceFinished:
		if e.Result != nil {
			seq := SequenceFrom(e.Result)
			return Record{Type: RecordEnd, Sequence: &seq}, true
		}
	}
	return Record{}, false
}

func (s *Stream) encodeLocked(r *Record) {
	if s.err != nil || s.f == nil {
		return
	}
	if err := s.enc.Encode(r); err != nil {
		s.err = fmt.Errorf("encode an event of the stream %s: %w", s.path, err)
		return
	}
	s.ends = append(s.ends, s.buf.Len())
}

// flushLocked writes the buffered records. On a failed write it keeps the
// whole records that made it, cuts the file back to them, and goes on in
// the spare.
func (s *Stream) flushLocked() {
	if s.err != nil || s.f == nil || s.buf.Len() == 0 {
		return
	}
	data := s.buf.Bytes()
	n, err := s.f.Write(data)
	if err == nil {
		s.off += int64(n)
		s.buf.Reset()
		s.ends = s.ends[:0]
		return
	}
	// The records that ended within n bytes are in the file whole.
	whole := 0
	for _, end := range s.ends {
		if end > n {
			break
		}
		whole = end
	}
	s.off += int64(whole)
	cause := fmt.Errorf("write the event stream %s: %w", s.path, err)
	if terr := s.f.Truncate(s.off); terr != nil {
		cause = fmt.Errorf("%w (and cutting it back to its last whole record: %v)", cause, terr)
	}
	rest := data[whole:]
	if serr := s.toSpare(rest, cause); serr != nil {
		s.err = serr
		return
	}
	s.buf.Reset()
	s.ends = s.ends[:0]
}

// toSpare goes on in the spare file: a copy of the event file's whole
// records, then rest. It is called once, with the lock held.
func (s *Stream) toSpare(rest []byte, cause error) error {
	if s.Spare == nil || s.lost != nil {
		return cause
	}
	s.lost = fmt.Errorf("%w: it holds the run's first %d bytes of events", cause, s.off)
	spare, err := s.Spare()
	if err != nil {
		return fmt.Errorf("%w; no spare: %v", cause, err)
	}
	g, err := os.Create(spare)
	if err != nil {
		return fmt.Errorf("%w; spare: %v", cause, err)
	}
	_, err = s.f.Seek(0, io.SeekStart)
	if err == nil {
		_, err = io.Copy(g, io.LimitReader(s.f, s.off))
	}
	if err == nil {
		_, err = g.Write(rest)
	}
	if err != nil {
		g.Close()
		return fmt.Errorf("%w; spare %s: %v", cause, spare, err)
	}
	s.f.Close()
	s.f, s.path = g, spare
	s.off += int64(len(rest))
	return nil
}

// Err returns the first error that cost the reports events, or nil.
func (s *Stream) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Incomplete says what the event file lacks when the stream went on in its
// spare, or nil. The reports, written from Path, lack nothing then.
func (s *Stream) Incomplete() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lost
}

// Close writes the waiting records and closes the event file; it returns
// Err or the error closing it. Close is idempotent.
func (s *Stream) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return s.err
	}
	s.drainLocked()
	s.pmu.Lock()
	if s.timer != nil {
		s.timer.Stop()
		s.armed = false
	}
	s.pmu.Unlock()
	if s.f != nil {
		if err := s.f.Close(); err != nil && s.err == nil {
			s.err = fmt.Errorf("close the event stream %s: %w", s.path, err)
		}
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

// approxSize is about how many bytes r takes when encoded, without
// encoding it: the text it carries. It bounds the memory of the records a
// Stream holds back.
func (r *Record) approxSize() int {
	n := 64
	if st := r.Step; st != nil {
		n += len(st.Path) + len(st.Name) + len(st.Message) + len(st.Expected) + len(st.Received) +
			valueSize(st.Saved) + valueSize(st.Data)
		for _, a := range st.Attachments {
			n += len(a)
		}
	}
	if r.Sequence != nil {
		n += 256 // written at once anyway
	}
	return n
}

// valueSize is about how many bytes v takes in JSON.
func valueSize(v any) int {
	switch x := v.(type) {
	case string:
		return len(x) + 2
	case []byte:
		return 2 * len(x)
	case map[string]any:
		n := 2
		for k, e := range x {
			n += len(k) + 4 + valueSize(e)
		}
		return n
	case []any:
		n := 2
		for _, e := range x {
			n += 1 + valueSize(e)
		}
		return n
	}
	rv := reflect.ValueOf(v)
	if k := rv.Kind(); k == reflect.Slice || k == reflect.Array {
		return 2 + 24*rv.Len()
	}
	return 24
}

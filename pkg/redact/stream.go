package redact

import (
	"bytes"
	"io"
)

// Stream masks a byte stream that arrives in chunks, such as a console's
// output: each secret's bytes become '*', even when the secret is split
// across chunks. While the end of what arrived could be the start of a
// secret, Stream holds those bytes back (at most the longest secret's
// length less one byte) until the next chunk tells, or Flush. A Stream is
// not safe for concurrent use.
type Stream struct {
	set *Set
	// prev is the end of what was already let out, unmasked, so that a
	// secret whose start was flushed is still masked from there on.
	prev []byte
	held []byte
	// heldMask marks the held bytes already known to be a secret's.
	heldMask []bool
}

// NewStream is a Stream over s; nil when s is empty, and a nil *Stream
// passes everything through at once.
func (s *Set) NewStream() *Stream {
	if s.Empty() {
		return nil
	}
	return &Stream{set: s}
}

// Held counts the bytes held back.
func (st *Stream) Held() int {
	if st == nil {
		return 0
	}
	return len(st.held)
}

// Write takes the next chunk p and returns what may be let out now,
// masked: a new slice, never p itself, when st is not nil.
func (st *Stream) Write(p []byte) []byte {
	if st == nil {
		return p
	}
	np := len(st.prev)
	data := make([]byte, 0, np+len(st.held)+len(p))
	data = append(append(append(data, st.prev...), st.held...), p...)
	mask := make([]bool, len(data))
	copy(mask[np:], st.heldMask)
	for _, sec := range st.set.secrets {
		v := []byte(sec.Value)
		for from := 0; ; {
			i := bytes.Index(data[from:], v)
			if i < 0 {
				break
			}
			for j := from + i; j < from+i+len(v); j++ {
				mask[j] = true
			}
			from += i + 1
		}
	}
	hold := st.holdFrom(data, np)
	out := make([]byte, hold-np)
	for i := range out {
		if mask[np+i] {
			out[i] = '*'
		} else {
			out[i] = data[np+i]
		}
	}
	st.held = append(st.held[:0], data[hold:]...)
	st.heldMask = append(st.heldMask[:0], mask[hold:]...)
	st.keep(data[:hold])
	return out
}

// holdFrom is where the bytes to hold back begin: the earliest place, at
// or after from and within a secret's length of the end, where the rest
// of data is the start of some secret; len(data) when there is none.
func (st *Stream) holdFrom(data []byte, from int) int {
	start := max(from, len(data)-(st.set.maxLen-1))
	for i := start; i < len(data); i++ {
		for _, sec := range st.set.secrets {
			if len(data)-i < len(sec.Value) && bytes.HasPrefix([]byte(sec.Value), data[i:]) {
				return i
			}
		}
	}
	return len(data)
}

// keep remembers the last bytes let out, as many as a secret could still
// reach back.
func (st *Stream) keep(out []byte) {
	n := st.set.maxLen - 1
	if len(out) > n {
		out = out[len(out)-n:]
	}
	st.prev = append(st.prev[:0], out...)
}

// Flush lets out what is held back, masked as far as it is known to be a
// secret: at the end of a run, or once the device has been quiet for a
// while.
func (st *Stream) Flush() []byte {
	if st == nil || len(st.held) == 0 {
		return nil
	}
	out := make([]byte, len(st.held))
	for i, b := range st.held {
		if st.heldMask[i] {
			out[i] = '*'
		} else {
			out[i] = b
		}
	}
	data := append(append([]byte(nil), st.prev...), st.held...)
	st.keep(data)
	st.held, st.heldMask = st.held[:0], st.heldMask[:0]
	return out
}

// Writer is an io.Writer that masks what passes through it (a Stream) on
// its way to W; Flush lets out what it holds back. A nil Set makes a
// Writer that passes everything at once.
type Writer struct {
	W  io.Writer
	st *Stream
}

// NewWriter masks s's secrets on the way to w.
func (s *Set) NewWriter(w io.Writer) *Writer { return &Writer{W: w, st: s.NewStream()} }

// Write writes what may be let out of p; it reports len(p) unless W
// fails.
func (w *Writer) Write(p []byte) (int, error) {
	if w.st == nil {
		return w.W.Write(p)
	}
	if out := w.st.Write(p); len(out) > 0 {
		if _, err := w.W.Write(out); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes what is held back.
func (w *Writer) Flush() error {
	if out := w.st.Flush(); len(out) > 0 {
		_, err := w.W.Write(out)
		return err
	}
	return nil
}

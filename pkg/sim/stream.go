package sim

import (
	"fmt"
	"io"
)

// StreamLineLen is the length in bytes of each line of stream data, line
// ending included.
const StreamLineLen = 64

// StreamData returns the first n bytes the board's `stream n` command prints
// before its closing line ending and prompt. The data is a run of
// StreamLineLen-byte lines: line k (from 0) is k modulo 10^8 as "%08d", a
// space, capital letters starting at 'A'+k%26 and wrapping after 'Z', then
// the line ending; the last line is cut short so the total is exactly n.
// lineEnding is "crlf", "lf" or "cr" (or the literal "\r\n", "\n", "\r";
// "" means "crlf"). StreamData panics on any other lineEnding. A negative n
// gives no data.
//
// StreamData holds all n bytes in memory; NewStreamReader produces the same
// bytes piecewise for large n.
func StreamData(n int, lineEnding string) []byte {
	if n <= 0 {
		return []byte{}
	}
	p := make([]byte, n)
	g := NewStreamReader(int64(n), lineEnding)
	if _, err := io.ReadFull(g, p); err != nil {
		panic(fmt.Sprintf("sim: stream data: %v", err))
	}
	return p
}

// StreamReader reads the bytes of StreamData(n, lineEnding) without holding
// them all in memory, so a 1 GB stream can be checked chunk by chunk.
type StreamReader struct {
	n, pos int64
	tails  [26][]byte // letters and line ending for each line k%26
}

// NewStreamReader returns a reader of exactly n bytes of stream data; see
// StreamData for the format and the accepted line endings. It panics on an
// unknown lineEnding.
func NewStreamReader(n int64, lineEnding string) *StreamReader {
	le, err := lineEndingBytes(lineEnding)
	if err != nil {
		panic(fmt.Sprintf("sim: stream data: %v", err))
	}
	r := &StreamReader{n: max(n, 0)}
	letters := StreamLineLen - 9 - len(le)
	for k := range r.tails {
		t := make([]byte, 0, letters+len(le))
		for j := range letters {
			t = append(t, 'A'+byte((k+j)%26))
		}
		r.tails[k] = append(t, le...)
	}
	return r
}

// Read fills p with the next stream bytes. It returns io.EOF once all n
// bytes have been read.
func (r *StreamReader) Read(p []byte) (int, error) {
	if r.pos >= r.n {
		return 0, io.EOF
	}
	if rest := r.n - r.pos; int64(len(p)) > rest {
		p = p[:rest]
	}
	total := 0
	var scratch [StreamLineLen]byte
	for len(p) > 0 {
		line := r.pos / StreamLineLen
		off := int(r.pos % StreamLineLen)
		var c int
		if off == 0 && len(p) >= StreamLineLen {
			r.fill(p[:StreamLineLen], line)
			c = StreamLineLen
		} else {
			r.fill(scratch[:], line)
			c = copy(p, scratch[off:])
		}
		p = p[c:]
		r.pos += int64(c)
		total += c
	}
	return total, nil
}

// fill writes line k of the stream into dst, which is StreamLineLen long.
func (r *StreamReader) fill(dst []byte, k int64) {
	v := k % 100000000
	for i := 7; i >= 0; i-- {
		dst[i] = '0' + byte(v%10)
		v /= 10
	}
	dst[8] = ' '
	copy(dst[9:], r.tails[k%26])
}

// lineEndingBytes maps an Options.LineEnding value to the bytes it stands for.
func lineEndingBytes(s string) ([]byte, error) {
	switch s {
	case "", "crlf", "\r\n":
		return []byte("\r\n"), nil
	case "lf", "\n":
		return []byte("\n"), nil
	case "cr", "\r":
		return []byte("\r"), nil
	}
	return nil, fmt.Errorf("invalid line ending %q (want crlf, lf or cr)", s)
}

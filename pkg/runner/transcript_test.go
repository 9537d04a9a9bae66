package runner

import (
	"bytes"
	"fmt"
	"testing"
)

// TestTranscriptRing writes chunks of every size into a small transcript
// and checks it always holds the last limit bytes and counts the rest.
func TestTranscriptRing(t *testing.T) {
	for _, limit := range []int{1, 7, 16} {
		for chunk := 1; chunk <= 2*limit+1; chunk++ {
			t.Run(fmt.Sprintf("limit %d chunk %d", limit, chunk), func(t *testing.T) {
				tr := &transcript{limit: limit}
				var all []byte
				for i := 0; i < 5*limit; i += chunk {
					p := make([]byte, chunk)
					for j := range p {
						p[j] = byte('a' + (i+j)%26)
					}
					all = append(all, p...)
					tr.write(p)
					want := all[max(0, len(all)-limit):]
					if got := tr.bytes(); !bytes.Equal(got, want) {
						t.Fatalf("after %d bytes: %q, want %q", len(all), got, want)
					}
					if tr.dropped != int64(len(all)-len(want)) || len(tr.buf) > limit || cap(tr.buf) > limit {
						t.Fatalf("dropped %d, held %d in a capacity of %d", tr.dropped, len(tr.buf), cap(tr.buf))
					}
				}
			})
		}
	}
}

// TestTranscriptMemoryBounded feeds a transcript of the default limit
// 40 times its size, in chunks of an odd size as a serial port delivers
// them: its buffer never grows past the limit, so a console's transcript
// costs the same memory after a million steps as after a few thousand.
func TestTranscriptMemoryBounded(t *testing.T) {
	const limit = 256 << 10
	tr := &transcript{limit: limit}
	chunk := bytes.Repeat([]byte("echo ok\r\nok\r\n$ "), 273) // 4,641 bytes
	var fed int64
	for fed < 40*limit {
		tr.write(chunk)
		fed += int64(len(chunk))
		if cap(tr.buf) > limit {
			t.Fatalf("after %d bytes the transcript holds a buffer of %d bytes, over its limit of %d", fed, cap(tr.buf), limit)
		}
	}
	if len(tr.buf) != limit || tr.dropped != fed-limit {
		t.Fatalf("held %d bytes and dropped %d of %d; want %d held", len(tr.buf), tr.dropped, fed, limit)
	}
}

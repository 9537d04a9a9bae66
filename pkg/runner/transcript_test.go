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
					if tr.dropped != int64(len(all)-len(want)) || len(tr.buf) > limit {
						t.Fatalf("dropped %d, held %d", tr.dropped, len(tr.buf))
					}
				}
			})
		}
	}
}

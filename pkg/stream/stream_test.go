package stream

import (
	"bytes"
	"context"
	"testing"
	"time"
)

// benchFiller is console-like output that never contains the markers.
var benchFiller = func() []byte {
	line := []byte("[  123.456789] sensor0: temp=23.4C hum=41% vbat=3.71V state=IDLE\r\n")
	return bytes.Repeat(line, 4<<20/len(line)+1)[:4<<20]
}()

// benchExpect streams total bytes in chunks of 4 KiB from one goroutine
// while another waits for pat, which appears only in the last chunk.
func benchExpect(b *testing.B, pat Pattern, marker string) {
	const total = 25 << 20
	const chunk = 4 << 10
	b.SetBytes(total)
	b.ReportAllocs()
	for b.Loop() {
		buf := NewBuffer(0)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		done := make(chan error, 1)
		started := make(chan struct{})
		go func() {
			close(started)
			m, err := buf.Expect(ctx, 0, []Pattern{pat}, nil)
			if err == nil && m.End != total {
				b.Errorf("match ends at %d, want %d", m.End, total)
			}
			done <- err
		}()
		<-started
		now := time.Now()
		n := 0
		for n < total-chunk {
			off := n % len(benchFiller)
			end := min(off+chunk, len(benchFiller))
			buf.Append(now, benchFiller[off:end])
			n += end - off
		}
		last := make([]byte, total-n)
		copy(last, benchFiller)
		copy(last[len(last)-len(marker):], marker)
		buf.Append(now, last)
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		cancel()
	}
}

func BenchmarkExpectLiteral25MB(b *testing.B) {
	benchExpect(b, Literal("SELFTEST PASSED"), "SELFTEST PASSED")
}

func BenchmarkExpectRegexp25MB(b *testing.B) {
	benchExpect(b, MustRegexp(`SELFTEST (PASSED|FAILED) in (\d+) ms`), "SELFTEST PASSED in 42 ms")
}

// A regexp without a literal prefix exercises the regexp engine rather
// than a byte search.
func BenchmarkExpectRegexpNoPrefix25MB(b *testing.B) {
	benchExpect(b, MustRegexp(`(?:PANIC|ASSERT|FAULT)=\d+`), "FAULT=17")
}

// Watchers scan inside Append; this is their cost on the appending side.
func BenchmarkAppendWithWatch25MB(b *testing.B) {
	const total = 25 << 20
	b.SetBytes(total)
	for b.Loop() {
		buf := NewBuffer(0)
		buf.Watch([]Pattern{Literal("HardFault"), Literal("Guru Meditation")}, func(Hit) {})
		now := time.Now()
		for n := 0; n < total; n += 4 << 10 {
			off := n % len(benchFiller)
			buf.Append(now, benchFiller[off:off+4<<10])
		}
	}
}

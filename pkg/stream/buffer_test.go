package stream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func appendAll(b *Buffer, chunks ...string) {
	for i, c := range chunks {
		b.Append(t0.Add(time.Duration(i)*time.Millisecond), []byte(c))
	}
}

func TestBufferRetention(t *testing.T) {
	tests := []struct {
		name      string
		capacity  int
		chunks    []string
		wantStart int64
		wantEnd   int64
		wantData  string
	}{
		{name: "empty", capacity: 8, wantStart: 0, wantEnd: 0, wantData: ""},
		{name: "under capacity", capacity: 8, chunks: []string{"abc", "de"}, wantStart: 0, wantEnd: 5, wantData: "abcde"},
		{name: "exactly capacity", capacity: 8, chunks: []string{"abcd", "efgh"}, wantStart: 0, wantEnd: 8, wantData: "abcdefgh"},
		{name: "drops oldest", capacity: 8, chunks: []string{"abcdef", "ghij"}, wantStart: 2, wantEnd: 10, wantData: "cdefghij"},
		{name: "chunk larger than capacity", capacity: 4, chunks: []string{"ab", "cdefghij"}, wantStart: 6, wantEnd: 10, wantData: "ghij"},
		{name: "chunk equal to capacity", capacity: 4, chunks: []string{"ab", "cdef"}, wantStart: 2, wantEnd: 6, wantData: "cdef"},
		{name: "many small chunks", capacity: 5, chunks: strings.Split("0123456789abcdefghij", ""), wantStart: 15, wantEnd: 20, wantData: "fghij"},
		{name: "empty chunks ignored", capacity: 5, chunks: []string{"", "ab", ""}, wantStart: 0, wantEnd: 2, wantData: "ab"},
		{name: "default capacity", capacity: 0, chunks: []string{"x"}, wantStart: 0, wantEnd: 1, wantData: "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBuffer(tt.capacity)
			appendAll(b, tt.chunks...)
			if got := b.Start(); got != tt.wantStart {
				t.Errorf("Start() = %d, want %d", got, tt.wantStart)
			}
			if got := b.End(); got != tt.wantEnd {
				t.Errorf("End() = %d, want %d", got, tt.wantEnd)
			}
			data, start, next := b.Read(0, 0)
			if string(data) != tt.wantData || start != tt.wantStart || next != tt.wantEnd {
				t.Errorf("Read(0, 0) = %q, %d, %d; want %q, %d, %d", data, start, next, tt.wantData, tt.wantStart, tt.wantEnd)
			}
		})
	}
}

// The sliding storage must keep the right bytes across many compactions,
// whatever the chunk sizes.
func TestBufferRetentionMatchesModel(t *testing.T) {
	for _, capacity := range []int{1, 3, 100, 5000} {
		t.Run(fmt.Sprint(capacity), func(t *testing.T) {
			b := NewBuffer(capacity)
			var all []byte
			for i := range 3000 {
				n := (i*7919)%(2*capacity+3) + 1
				chunk := bytes.Repeat([]byte{byte(i)}, n)
				chunk[0] = byte(i >> 8)
				all = append(all, chunk...)
				b.Append(t0, chunk)
				want := all[max(0, len(all)-capacity):]
				data, start, next := b.Read(0, 0)
				if !bytes.Equal(data, want) || start != int64(len(all)-len(want)) || next != int64(len(all)) {
					t.Fatalf("after chunk %d: Read = %d bytes from %d to %d, want %d bytes from %d", i, len(data), start, next, len(want), len(all)-len(want))
				}
			}
		})
	}
}

func TestBufferRead(t *testing.T) {
	b := NewBuffer(10)
	appendAll(b, "0123456789", "abcde") // retains 56789abcde at offsets 5..15
	tests := []struct {
		name      string
		from      int64
		max       int
		wantData  string
		wantStart int64
		wantNext  int64
	}{
		{name: "all", from: 5, max: 0, wantData: "56789abcde", wantStart: 5, wantNext: 15},
		{name: "dropped from is clamped", from: 0, max: 0, wantData: "56789abcde", wantStart: 5, wantNext: 15},
		{name: "negative from", from: -3, max: 2, wantData: "56", wantStart: 5, wantNext: 7},
		{name: "middle with max", from: 9, max: 3, wantData: "9ab", wantStart: 9, wantNext: 12},
		{name: "max beyond end", from: 13, max: 100, wantData: "de", wantStart: 13, wantNext: 15},
		{name: "at end", from: 15, max: 0, wantData: "", wantStart: 15, wantNext: 15},
		{name: "future", from: 20, max: 0, wantData: "", wantStart: 20, wantNext: 20},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data, start, next := b.Read(tt.from, tt.max)
			if string(data) != tt.wantData || start != tt.wantStart || next != tt.wantNext {
				t.Errorf("Read(%d, %d) = %q, %d, %d; want %q, %d, %d", tt.from, tt.max, data, start, next, tt.wantData, tt.wantStart, tt.wantNext)
			}
		})
	}
	t.Run("returns a copy", func(t *testing.T) {
		data, _, _ := b.Read(5, 0)
		data[0] = 'X'
		if again, _, _ := b.Read(5, 1); string(again) != "5" {
			t.Errorf("modifying Read's result changed the buffer: %q", again)
		}
	})
}

func TestBufferTail(t *testing.T) {
	tests := []struct {
		name     string
		data     string
		lines    int
		maxBytes int
		want     string
	}{
		{name: "last two lines", data: "a\nb\nc\nd\n", lines: 2, want: "c\nd\n"},
		{name: "unterminated last line", data: "a\nb\nc", lines: 2, want: "b\nc"},
		{name: "fewer lines than asked", data: "a\nb\n", lines: 5, want: "a\nb\n"},
		{name: "byte bound wins", data: "first\nsecond line\n", lines: 2, maxBytes: 8, want: "nd line\n"},
		{name: "no limits", data: "a\nb", want: "a\nb"},
		{name: "one line", data: "x\r\ny\r\n", lines: 1, want: "y\r\n"},
		{name: "empty", data: "", lines: 3, want: ""},
		{name: "only newlines", data: "\n\n\n", lines: 2, want: "\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBuffer(64)
			appendAll(b, tt.data)
			if got := string(b.Tail(tt.lines, tt.maxBytes)); got != tt.want {
				t.Errorf("Tail(%d, %d) = %q, want %q", tt.lines, tt.maxBytes, got, tt.want)
			}
		})
	}
}

func TestBufferLastAppend(t *testing.T) {
	b := NewBuffer(0)
	if !b.LastAppend().IsZero() {
		t.Errorf("LastAppend() of an empty buffer = %v", b.LastAppend())
	}
	b.Append(t0, []byte("a"))
	b.Append(t0.Add(time.Second), []byte("b"))
	if got := b.LastAppend(); !got.Equal(t0.Add(time.Second)) {
		t.Errorf("LastAppend() = %v, want %v", got, t0.Add(time.Second))
	}
}

func TestBufferWait(t *testing.T) {
	errBroken := errors.New("broken")
	tests := []struct {
		name    string
		from    int64
		setup   func(b *Buffer)
		later   func(b *Buffer)
		timeout time.Duration
		wantErr error
	}{
		{name: "data already there", from: 0, setup: func(b *Buffer) { appendAll(b, "x") }},
		{name: "data arrives", from: 1, setup: func(b *Buffer) { appendAll(b, "x") }, later: func(b *Buffer) { appendAll(b, "y") }},
		{name: "error set", from: 0, later: func(b *Buffer) { b.SetErr(errBroken) }, wantErr: errBroken},
		{name: "timeout", from: 0, timeout: 20 * time.Millisecond, wantErr: context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBuffer(0)
			if tt.setup != nil {
				tt.setup(b)
			}
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 5 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			if tt.later != nil {
				go func() {
					time.Sleep(5 * time.Millisecond)
					tt.later(b)
				}()
			}
			err := b.Wait(ctx, tt.from)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Errorf("Wait = %v, want %v", err, tt.wantErr)
			}
		})
	}
}

func TestBufferSetErrClears(t *testing.T) {
	b := NewBuffer(0)
	errGone := errors.New("gone")
	b.SetErr(errGone)
	if !errors.Is(b.Err(), errGone) {
		t.Fatalf("Err() = %v", b.Err())
	}
	b.SetErr(nil)
	if b.Err() != nil {
		t.Fatalf("Err() after SetErr(nil) = %v", b.Err())
	}
	appendAll(b, "abc")
	if b.End() != 3 {
		t.Errorf("End() = %d after clearing the error", b.End())
	}
}

// However much is appended, the buffer holds about its capacity, and a
// pattern at the very end is still found.
func TestBufferBoundedMemory(t *testing.T) {
	const total = 50 << 20
	b := NewBuffer(1 << 20)
	chunk := bytes.Repeat([]byte("[ 1234.567] sensor: temp=23.4C hum=41%\n"), 100)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	type result struct {
		m   Match
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := b.Expect(ctx, 0, []Pattern{Literal("END-OF-TEST")}, nil)
		done <- result{m, err}
	}()

	var before runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for n := 0; n < total; n += len(chunk) {
		b.Append(t0, chunk)
	}
	b.Append(t0, []byte("END-OF-TEST\n"))
	r := <-done
	if r.err != nil {
		t.Fatalf("Expect: %v", r.err)
	}
	end := b.End()
	if r.m.End != end-1 || r.m.Start != end-12 {
		t.Errorf("match at [%d, %d), want [%d, %d)", r.m.Start, r.m.End, end-12, end-1)
	}
	if got, want := b.Start(), end-(1<<20); got != want {
		t.Errorf("Start() = %d, want %d", got, want)
	}
	if len(r.m.Data) > 1<<20 {
		t.Errorf("Match.Data holds %d bytes, more than the capacity", len(r.m.Data))
	}
	var after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grown := int64(after.HeapInuse) - int64(before.HeapInuse); grown > 8<<20 {
		t.Errorf("heap grew by %d bytes while appending 50 MB to a 1 MiB buffer", grown)
	}
}

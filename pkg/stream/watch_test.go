package stream

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

type hitLog struct {
	mu   sync.Mutex
	hits []Hit
}

func (l *hitLog) add(h Hit) {
	l.mu.Lock()
	l.hits = append(l.hits, h)
	l.mu.Unlock()
}

func (l *hitLog) summary() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var s []string
	for _, h := range l.hits {
		s = append(s, h.Pattern.String()+"@"+strconv.FormatInt(h.Offset, 10)+":"+h.Line)
	}
	return s
}

func TestWatch(t *testing.T) {
	tests := []struct {
		name   string
		before []string // appended before Watch
		chunks []string
		pats   []Pattern
		want   []string
	}{
		{
			name:   "each occurrence once",
			chunks: []string{"HardFault\n", "ok\n", "HardFault again\n"},
			pats:   []Pattern{Literal("HardFault")},
			want:   []string{`HardFault@0:HardFault`, `HardFault@13:HardFault again`},
		},
		{
			name:   "straddling occurrence",
			chunks: []string{"x Guru Medi", "tation 0x1\r\n"},
			pats:   []Pattern{Literal("Guru Meditation")},
			want:   []string{`Guru Meditation@2:x Guru Meditation 0x1`},
		},
		{
			name:   "bytes before Watch are not reported",
			before: []string{"HardFault old\n"},
			chunks: []string{"fine\n"},
			pats:   []Pattern{Literal("HardFault")},
			want:   nil,
		},
		{
			name:   "occurrence split by the registration point is not reported",
			before: []string{"Hard"},
			chunks: []string{"Fault\n"},
			pats:   []Pattern{Literal("HardFault")},
			want:   nil,
		},
		{
			name:   "several patterns in offset order",
			chunks: []string{"b1 a1 b2\n"},
			pats:   []Pattern{Literal("a"), MustRegexp(`b\d`)},
			want:   []string{`b\d@0:b1 a1 b2`, `a@3:b1 a1 b2`, `b\d@6:b1 a1 b2`},
		},
		{
			name:   "regexp byte by byte",
			chunks: strings.Split("err=12;err=7;", ""),
			pats:   []Pattern{MustRegexp(`err=\d+;`)},
			want:   []string{`err=\d+;@0:err=12;`, `err=\d+;@7:err=12;err=7;`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBuffer(0)
			appendAll(b, tt.before...)
			var log hitLog
			cancel := b.Watch(tt.pats, log.add)
			defer cancel()
			appendAll(b, tt.chunks...)
			if got := log.summary(); !slices.Equal(got, tt.want) {
				t.Errorf("hits = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWatchHitFields(t *testing.T) {
	b := NewBuffer(0)
	var log hitLog
	defer b.Watch([]Pattern{Literal("x"), Literal("HardFault")}, log.add)()
	at := t0.Add(time.Hour)
	b.Append(at, []byte("PC=0\r\nHardFault\xff\r\n"))
	if len(log.hits) != 1 {
		t.Fatalf("hits = %+v", log.hits)
	}
	h := log.hits[0]
	if h.Index != 1 || h.Offset != 6 || h.Line != `HardFault\xff` || !h.At.Equal(at) {
		t.Errorf("hit = %+v", h)
	}
}

func TestWatchCancel(t *testing.T) {
	b := NewBuffer(0)
	var log hitLog
	cancel := b.Watch([]Pattern{Literal("E")}, log.add)
	appendAll(b, "E")
	cancel()
	cancel() // idempotent
	appendAll(b, "E")
	if n := len(log.summary()); n != 1 {
		t.Errorf("%d hits, want 1", n)
	}
}

// A watcher may cancel itself from its callback; later occurrences in the
// same Append are not reported.
func TestWatchCancelFromCallback(t *testing.T) {
	b := NewBuffer(0)
	var log hitLog
	var cancel func()
	cancel = b.Watch([]Pattern{Literal("E")}, func(h Hit) {
		log.add(h)
		cancel()
	})
	appendAll(b, "E E E", "E")
	if n := len(log.summary()); n != 1 {
		t.Errorf("%d hits, want 1", n)
	}
}

// A watcher hears of a fault before any waiter can see the bytes, so a
// sequence-wide fail_on that cancels the step's context stops an expect that
// would otherwise match what follows the fault in the same chunk.
func TestWatchRunsBeforeWaiters(t *testing.T) {
	for i := range 50 {
		b := NewBuffer(0)
		ctx, cancel := context.WithCancel(context.Background())
		stop := b.Watch([]Pattern{Literal("HardFault")}, func(h Hit) { cancel() })
		done := make(chan error, 1)
		go func() {
			_, err := b.Expect(ctx, 0, []Pattern{Literal("prompt")}, nil)
			done <- err
		}()
		if i%2 == 0 {
			time.Sleep(time.Millisecond)
		}
		appendAll(b, "HardFault\nprompt")
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("run %d: Expect = %v, want context.Canceled", i, err)
		}
		stop()
		cancel()
	}
}

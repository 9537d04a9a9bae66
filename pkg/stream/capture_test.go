package stream

import (
	"context"
	"errors"
	"testing"
	"time"
)

// feed is a chunk the fake device prints after a delay from the previous one.
type feed struct {
	after time.Duration
	data  string
}

func play(b *Buffer, feeds []feed) {
	for _, f := range feeds {
		time.Sleep(f.after)
		b.Append(time.Now(), []byte(f.data))
	}
}

func TestCapture(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name       string
		before     string
		from       int64 // -1: End() after before
		feeds      []feed
		opt        CaptureOptions
		wantData   string
		wantStart  int64
		wantReason string
		wantUntil  []string // Until.Groups
		minElapsed time.Duration
		maxElapsed time.Duration
	}{
		{
			name: "duration", from: 0,
			feeds:    []feed{{10 * ms, "a"}, {10 * ms, "b"}, {200 * ms, "late"}},
			opt:      CaptureOptions{Duration: 80 * ms},
			wantData: "ab", wantReason: ReasonDuration, minElapsed: 80 * ms,
		},
		{
			name: "duration includes retained bytes after from", before: "old\nnew", from: 4,
			opt:      CaptureOptions{Duration: 20 * ms},
			wantData: "new", wantStart: 4, wantReason: ReasonDuration, minElapsed: 20 * ms,
		},
		{
			name: "idle after the last byte", from: 0,
			feeds:    []feed{{30 * ms, "line 1\n"}, {10 * ms, "line 2\n"}},
			opt:      CaptureOptions{IdleTimeout: 100 * ms},
			wantData: "line 1\nline 2\n", wantReason: ReasonIdle, minElapsed: 140 * ms,
		},
		{
			name: "idle waits for a first byte", from: 0,
			feeds:    []feed{{120 * ms, "x"}},
			opt:      CaptureOptions{IdleTimeout: 40 * ms},
			wantData: "x", wantReason: ReasonIdle, minElapsed: 160 * ms,
		},
		{
			name: "until inclusive", from: 0,
			feeds:    []feed{{5 * ms, "boot...\nrea"}, {5 * ms, "dy> tail"}},
			opt:      CaptureOptions{Until: []Pattern{Literal("ready>")}, Duration: 20 * time.Second},
			wantData: "boot...\nready>", wantReason: ReasonUntil, wantUntil: []string{"ready>"}, maxElapsed: 10 * time.Second,
		},
		{
			name: "until regexp groups", before: "x", from: -1,
			feeds:    []feed{{5 * ms, "uptime 42s\n"}},
			opt:      CaptureOptions{Until: []Pattern{MustRegexp(`uptime (\d+)s`)}},
			wantData: "uptime 42s", wantStart: 1, wantReason: ReasonUntil, wantUntil: []string{"uptime 42s", "42"},
		},
		{
			name: "max bytes cuts the data", from: 0,
			feeds:    []feed{{5 * ms, "0123"}, {5 * ms, "456789"}},
			opt:      CaptureOptions{MaxBytes: 6},
			wantData: "012345", wantReason: ReasonMaxBytes,
		},
		{
			name: "max bytes before a straddling until", from: 0,
			feeds:    []feed{{5 * ms, "abcdEN"}, {5 * ms, "D"}},
			opt:      CaptureOptions{MaxBytes: 6, Until: []Pattern{Literal("END")}},
			wantData: "abcdEN", wantReason: ReasonMaxBytes,
		},
		{
			name: "until within max bytes", from: 0,
			feeds:    []feed{{5 * ms, "abEND"}},
			opt:      CaptureOptions{MaxBytes: 5, Until: []Pattern{Literal("END")}},
			wantData: "abEND", wantReason: ReasonUntil, wantUntil: []string{"END"},
		},
		{
			name: "window opens at the first byte", from: 0,
			feeds:    []feed{{100 * ms, "a"}, {20 * ms, "b"}, {150 * ms, "c"}},
			opt:      CaptureOptions{Duration: 80 * ms, StartOnFirstByte: true},
			wantData: "ab", wantReason: ReasonDuration, minElapsed: 180 * ms,
		},
		{
			name: "no data", from: 0,
			feeds:    []feed{{200 * ms, "too late"}},
			opt:      CaptureOptions{Duration: time.Second, StartOnFirstByte: true, InitialTimeout: 40 * ms},
			wantData: "", wantReason: ReasonNoData, minElapsed: 40 * ms,
		},
		{
			name: "initial timeout satisfied", from: 0,
			feeds:    []feed{{10 * ms, "hi"}},
			opt:      CaptureOptions{Duration: 50 * ms, StartOnFirstByte: true, InitialTimeout: 40 * ms},
			wantData: "hi", wantReason: ReasonDuration, minElapsed: 60 * ms,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			b := NewBuffer(0)
			appendAll(b, tt.before)
			from := tt.from
			if from < 0 {
				from = b.End()
			}
			go play(b, tt.feeds)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			start := time.Now()
			c, err := b.Capture(ctx, from, tt.opt)
			elapsed := time.Since(start)
			if err != nil {
				t.Fatalf("Capture: %v", err)
			}
			if string(c.Data) != tt.wantData || c.Reason != tt.wantReason {
				t.Errorf("Capture = %q (%s), want %q (%s)", c.Data, c.Reason, tt.wantData, tt.wantReason)
			}
			if c.Start != tt.wantStart || c.End != c.Start+int64(len(c.Data)) {
				t.Errorf("Capture [%d, %d) with %d bytes, want start %d", c.Start, c.End, len(c.Data), tt.wantStart)
			}
			if tt.wantUntil != nil {
				if c.Until == nil {
					t.Fatalf("Until = nil")
				}
				if got := c.Until.Groups; len(got) != len(tt.wantUntil) || got[0] != tt.wantUntil[0] || got[len(got)-1] != tt.wantUntil[len(got)-1] {
					t.Errorf("Until.Groups = %q, want %q", got, tt.wantUntil)
				}
				if c.Until.End != c.End {
					t.Errorf("Until.End = %d, capture End = %d", c.Until.End, c.End)
				}
			} else if c.Until != nil {
				t.Errorf("Until = %+v, want nil", c.Until)
			}
			if elapsed < tt.minElapsed {
				t.Errorf("returned after %v, before %v", elapsed, tt.minElapsed)
			}
			if tt.maxElapsed > 0 && elapsed > tt.maxElapsed {
				t.Errorf("returned after %v, later than %v", elapsed, tt.maxElapsed)
			}
		})
	}
}

func TestCaptureErrors(t *testing.T) {
	errGone := errors.New("device disconnected")
	tests := []struct {
		name     string
		opt      CaptureOptions
		feeds    []feed
		setErr   error
		timeout  time.Duration
		wantData string
		wantIs   error
		wantFail bool
	}{
		{
			name:  "fail_on aborts",
			opt:   CaptureOptions{Duration: 5 * time.Second, FailOn: []Pattern{Literal("panic")}},
			feeds: []feed{{5 * time.Millisecond, "ok\nkernel panic!\nmore"}}, wantData: "ok\nkernel panic", wantFail: true,
		},
		{
			name:  "fail_on before until",
			opt:   CaptureOptions{Until: []Pattern{Literal("$ ")}, FailOn: []Pattern{Literal("Oops")}},
			feeds: []feed{{5 * time.Millisecond, "Oops\n$ "}}, wantData: "Oops", wantFail: true,
		},
		{
			name:  "device error returns partial data",
			opt:   CaptureOptions{Duration: 5 * time.Second},
			feeds: []feed{{5 * time.Millisecond, "part"}}, setErr: errGone, wantData: "part", wantIs: errGone,
		},
		{
			name:    "context bounds an unbounded capture",
			feeds:   []feed{{5 * time.Millisecond, "some"}},
			timeout: 50 * time.Millisecond, wantData: "some", wantIs: context.DeadlineExceeded,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := NewBuffer(0)
			go func() {
				play(b, tt.feeds)
				if tt.setErr != nil {
					time.Sleep(5 * time.Millisecond)
					b.SetErr(tt.setErr)
				}
			}()
			timeout := tt.timeout
			if timeout == 0 {
				timeout = 10 * time.Second
			}
			ctx, cancel := context.WithTimeout(context.Background(), timeout)
			defer cancel()
			start := time.Now()
			c, err := b.Capture(ctx, 0, tt.opt)
			if tt.wantFail {
				var fe *FailOnError
				if !errors.As(err, &fe) {
					t.Fatalf("Capture error = %v, want *FailOnError", err)
				}
			} else if !errors.Is(err, tt.wantIs) {
				t.Fatalf("Capture error = %v, want %v", err, tt.wantIs)
			}
			if string(c.Data) != tt.wantData || c.Reason != "" {
				t.Errorf("Capture = %q (%q), want %q", c.Data, c.Reason, tt.wantData)
			}
			if tt.timeout == 0 && time.Since(start) > 2*time.Second {
				t.Errorf("Capture returned after %v, not at once", time.Since(start))
			}
		})
	}
}

// Captured data is bounded by the retention; the capture says where its
// data begins.
func TestCaptureBoundedByRetention(t *testing.T) {
	b := NewBuffer(10)
	go play(b, []feed{{5 * time.Millisecond, "0123456789abcdef"}, {5 * time.Millisecond, "END"}})
	c, err := b.Capture(context.Background(), 0, CaptureOptions{Until: []Pattern{Literal("END")}})
	if err != nil {
		t.Fatal(err)
	}
	if string(c.Data) != "9abcdefEND" || c.Start != 9 || c.End != 19 || c.Reason != ReasonUntil {
		t.Errorf("Capture = %q [%d, %d) %s", c.Data, c.Start, c.End, c.Reason)
	}
}

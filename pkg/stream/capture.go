package stream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
)

// Reasons a Capture ended.
const (
	ReasonDuration = "duration"  // the Duration window closed
	ReasonIdle     = "idle"      // IdleTimeout of silence after a byte
	ReasonUntil    = "until"     // an Until pattern matched
	ReasonMaxBytes = "max_bytes" // MaxBytes were captured
	ReasonNoData   = "no_data"   // nothing arrived within InitialTimeout
)

// CaptureOptions bound a Capture. At least one of Duration, IdleTimeout,
// Until, MaxBytes or the context should end it.
type CaptureOptions struct {
	// Duration is the length of the capture window; 0 means unbounded.
	Duration time.Duration
	// IdleTimeout ends the capture after this much silence once a byte has
	// arrived; 0 disables it.
	IdleTimeout time.Duration
	// InitialTimeout ends the capture with Reason "no_data" if no byte
	// arrives in this time; 0 waits for the other bounds. It is meant for
	// StartOnFirstByte but applies without it too.
	InitialTimeout time.Duration
	// StartOnFirstByte opens the Duration window when the first byte
	// arrives rather than when Capture is called. If bytes at or after from
	// are already there, the window opens at once.
	StartOnFirstByte bool
	// Until ends the capture when any of these matches; the match is
	// included in Data.
	Until []Pattern
	// MaxBytes ends the capture when this many bytes were captured; Data is
	// cut to MaxBytes. 0 means unbounded.
	MaxBytes int
	// FailOn aborts the capture with a *FailOnError when any of these
	// matches at or before an Until match.
	FailOn []Pattern
}

// Capture is what Capture collected.
type Capture struct {
	// Data holds the captured bytes, at most the Buffer's capacity: when
	// more arrived, the oldest are missing and Start is later than the
	// from given to Capture.
	Data []byte
	// Start is the offset of Data[0] and End the offset just past Data,
	// the cursor from which the next step continues.
	Start, End int64
	// Reason says why the capture ended: one of the Reason constants.
	Reason string
	// Until is the Until match when Reason is "until"; its Data is Data.
	Until *Match
}

// Capture collects the bytes from offset from until one of opt's bounds
// ends it. Timers run on the wall clock; a bound is noticed when the
// capture next runs, so a Duration window may include bytes that arrived a
// scheduling delay after it closed.
//
// On a fail_on match, the Buffer's error or ctx done, Capture returns what
// it collected so far (Reason "") together with the error: a
// *FailOnError, an error wrapping the Buffer's error or a *BufferError
// (see Expect), or one wrapping ctx.Err() and context.Cause(ctx).
func (b *Buffer) Capture(ctx context.Context, from int64, opt CaptureOptions) (Capture, error) {
	settle := settleOf(ctx)
	now := b.clock.Now()
	b.mu.RLock()
	from = max(from, b.start)
	b.mu.RUnlock()

	limit := int64(-1) // offset at which MaxBytes is reached
	if opt.MaxBytes > 0 {
		limit = from + int64(opt.MaxBytes)
	}
	var s *search
	if len(opt.Until) > 0 || len(opt.FailOn) > 0 {
		s = newSearch(from, opt.FailOn, opt.Until)
	}

	var (
		windowEnd   time.Time // zero until the Duration window opens
		initialEnd  time.Time
		lastSeen    = now // when the capture last saw End move
		seenEnd     = from
		gotByte     bool
		stopTimer   func() bool
		timerC      <-chan time.Time
		held        *found // a match held back, see Expect
		description = "capture output"
	)
	if opt.Duration > 0 && !opt.StartOnFirstByte {
		windowEnd = now.Add(opt.Duration)
	}
	if opt.InitialTimeout > 0 {
		initialEnd = now.Add(opt.InitialTimeout)
	}
	defer func() {
		if stopTimer != nil {
			stopTimer()
		}
	}()

	// result builds the Capture of the bytes up to end; the caller holds mu.
	result := func(end int64, reason string) Capture {
		start := max(from, b.start)
		end = max(end, start)
		return Capture{Data: bytes.Clone(b.slice(start, end)), Start: start, End: end, Reason: reason}
	}

	// matched builds the result of a fail_on or until match; the caller
	// holds mu.
	matched := func(f found) (Capture, error) {
		if f.k < len(opt.FailOn) {
			return result(f.loc[1], ""), b.failOnLocked(opt.FailOn[f.k], f)
		}
		i := f.k - len(opt.FailOn)
		c := result(f.loc[1], ReasonUntil)
		c.Until = &Match{
			Index:  i,
			Start:  f.loc[0],
			End:    f.loc[1],
			From:   from,
			Data:   c.Data,
			Groups: b.groupsLocked(f),
			Names:  opt.Until[i].SubexpNames(),
		}
		return c, nil
	}

	for {
		ch := b.waitChan()
		b.mu.RLock()
		end := b.end
		if limit >= 0 {
			end = min(end, limit)
		}
		var holdUntil time.Time
		held = nil
		if s != nil {
			f, ok, err := s.scanLocked(b, end)
			if err != nil {
				c := result(end, "")
				b.mu.RUnlock()
				return c, fmt.Errorf("%s: %w", description, err)
			}
			ctxErr := ctx.Err()
			if ok && ctxErr != nil && !errors.Is(ctxErr, context.DeadlineExceeded) {
				c := result(end, "")
				b.mu.RUnlock()
				return c, ctxError(description, ctx) // see Expect
			}
			if ok && end == b.end {
				// Held as in Expect; bytes cut off by MaxBytes decide
				// nothing.
				if d := s.holdLocked(b, f, ok, ctxErr, settle); d > 0 {
					holdUntil, held, ok = b.clock.Now().Add(d), &f, false
				}
			}
			if ok {
				c, err := matched(f)
				b.mu.RUnlock()
				return c, err
			}
		}
		if limit >= 0 && end >= limit {
			c := result(limit, ReasonMaxBytes)
			b.mu.RUnlock()
			return c, nil
		}
		bufErr := b.err
		b.mu.RUnlock()

		now = b.clock.Now()
		if end > seenEnd {
			seenEnd, lastSeen = end, now
			if !gotByte {
				gotByte = true
				if opt.Duration > 0 && opt.StartOnFirstByte {
					windowEnd = now.Add(opt.Duration)
				}
			}
		}
		reason := ""
		switch {
		case !windowEnd.IsZero() && !now.Before(windowEnd):
			reason = ReasonDuration
		case gotByte && opt.IdleTimeout > 0 && now.Sub(lastSeen) >= opt.IdleTimeout:
			reason = ReasonIdle
		case !gotByte && !initialEnd.IsZero() && !now.Before(initialEnd):
			reason = ReasonNoData
		}
		if reason != "" && held != nil {
			// The capture ends for another reason: commit the match held.
			b.mu.RLock()
			c, err := matched(*held)
			b.mu.RUnlock()
			return c, err
		}
		if reason != "" || bufErr != nil {
			b.mu.RLock()
			c := result(end, reason)
			b.mu.RUnlock()
			if reason != "" {
				return c, nil
			}
			return c, fmt.Errorf("%s: %w", description, bufErr)
		}

		// Sleep until the nearest deadline, new bytes or ctx.
		var next time.Time
		consider := func(t time.Time) {
			if !t.IsZero() && (next.IsZero() || t.Before(next)) {
				next = t
			}
		}
		consider(windowEnd)
		if gotByte && opt.IdleTimeout > 0 {
			consider(lastSeen.Add(opt.IdleTimeout))
		}
		if !gotByte {
			consider(initialEnd)
		}
		consider(holdUntil)
		timerC = nil
		if !next.IsZero() {
			if stopTimer != nil {
				stopTimer()
			}
			timerC, stopTimer = b.clock.Timer(next.Sub(now))
		}
		select {
		case <-ch:
		case <-timerC:
		case <-ctx.Done():
			if held != nil {
				continue // a deadline commits the match held, see Expect
			}
			b.mu.RLock()
			end := b.end
			if limit >= 0 {
				end = min(end, limit)
			}
			c := result(end, "")
			b.mu.RUnlock()
			return c, ctxError(description, ctx)
		}
	}
}

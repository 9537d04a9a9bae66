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
	c := b.newCapture(ctx, from, opt)
	defer c.stop()
	idled := false
	for {
		ch := b.waitChan()
		b.mu.RLock()
		end := c.endLocked()
		holdUntil, r, done, err := c.scanLocked(end)
		bufErr := b.err
		b.mu.RUnlock()
		if done {
			return r, err
		}

		now := b.clock.Now()
		if r, done, err := c.ended(end, now, bufErr); done {
			return r, err
		}

		// Sleep until the nearest deadline, new bytes or ctx.
		if !idled {
			idled = true
			Idle(ctx)
		}
		timerC := c.timer(now, holdUntil)
		select {
		case <-ch:
		case <-timerC:
		case <-ctx.Done():
			if c.held != nil {
				continue // a deadline commits the match held, see Expect
			}
			b.mu.RLock()
			r := c.resultLocked(c.endLocked(), "")
			b.mu.RUnlock()
			return r, ctxError(captureWhat, ctx)
		}
	}
}

// captureWhat says what a Capture does, in its errors.
const captureWhat = "capture output"

// capture is one Capture in progress.
type capture struct {
	b      *Buffer
	ctx    context.Context
	opt    CaptureOptions
	from   int64
	limit  int64   // offset at which MaxBytes is reached; -1 for none
	s      *search // nil without Until and FailOn patterns
	settle time.Duration

	windowEnd  time.Time // zero until the Duration window opens
	initialEnd time.Time
	lastSeen   time.Time // when the capture last saw End move
	seenEnd    int64
	gotByte    bool
	stopTimer  func() bool
	held       *found // a match held back, see Expect
}

// newCapture begins a Capture of the bytes from offset from (or the
// oldest kept, when later), its timers counted from now.
func (b *Buffer) newCapture(ctx context.Context, from int64, opt CaptureOptions) *capture {
	settle := settleOf(ctx)
	now := b.clock.Now()
	b.mu.RLock()
	from = max(from, b.start)
	b.mu.RUnlock()

	c := &capture{b: b, ctx: ctx, opt: opt, from: from, limit: -1, settle: settle, lastSeen: now, seenEnd: from}
	if opt.MaxBytes > 0 {
		c.limit = from + int64(opt.MaxBytes)
	}
	if len(opt.Until) > 0 || len(opt.FailOn) > 0 {
		c.s = newSearch(from, opt.FailOn, opt.Until)
	}
	if opt.Duration > 0 && !opt.StartOnFirstByte {
		c.windowEnd = now.Add(opt.Duration)
	}
	if opt.InitialTimeout > 0 {
		c.initialEnd = now.Add(opt.InitialTimeout)
	}
	return c
}

// stop stops the timer of the capture's nearest deadline, if one runs.
func (c *capture) stop() {
	if c.stopTimer != nil {
		c.stopTimer()
	}
}

// endLocked returns the end of what the capture may take: the Buffer's
// end, cut at MaxBytes. The caller holds mu.
func (c *capture) endLocked() int64 {
	end := c.b.end
	if c.limit >= 0 {
		end = min(end, c.limit)
	}
	return end
}

// scanLocked searches the bytes up to end for the Until and FailOn
// patterns and checks MaxBytes. done says the capture ends, with r and
// err; otherwise holdUntil is when a match held back (c.held) is
// committed, zero for none. The caller holds mu.
func (c *capture) scanLocked(end int64) (holdUntil time.Time, r Capture, done bool, err error) {
	b := c.b
	c.held = nil
	if c.s != nil {
		f, ok, err := c.s.scanLocked(b, end)
		if err != nil {
			return holdUntil, c.resultLocked(end, ""), true, fmt.Errorf("%s: %w", captureWhat, err)
		}
		ctxErr := c.ctx.Err()
		if ok && ctxErr != nil && !errors.Is(ctxErr, context.DeadlineExceeded) {
			return holdUntil, c.resultLocked(end, ""), true, ctxError(captureWhat, c.ctx) // see Expect
		}
		if ok && end == b.end {
			// Held as in Expect; bytes cut off by MaxBytes decide
			// nothing.
			if d := c.s.holdLocked(b, f, ok, ctxErr, c.settle); d > 0 {
				holdUntil, c.held, ok = b.clock.Now().Add(d), &f, false
			}
		}
		if ok {
			r, err := c.matchedLocked(f)
			return holdUntil, r, true, err
		}
	}
	if c.limit >= 0 && end >= c.limit {
		return holdUntil, c.resultLocked(c.limit, ReasonMaxBytes), true, nil
	}
	return holdUntil, Capture{}, false, nil
}

// ended notes that the capture saw the stream reach end at now, and
// decides whether the capture ends now: when a bound (the Duration window,
// IdleTimeout, InitialTimeout) has passed, or with bufErr, the Buffer's
// error.
func (c *capture) ended(end int64, now time.Time, bufErr error) (r Capture, done bool, err error) {
	opt := c.opt
	if end > c.seenEnd {
		c.seenEnd, c.lastSeen = end, now
		if !c.gotByte {
			c.gotByte = true
			if opt.Duration > 0 && opt.StartOnFirstByte {
				c.windowEnd = now.Add(opt.Duration)
			}
		}
	}
	reason := ""
	switch {
	case !c.windowEnd.IsZero() && !now.Before(c.windowEnd):
		reason = ReasonDuration
	case c.gotByte && opt.IdleTimeout > 0 && now.Sub(c.lastSeen) >= opt.IdleTimeout:
		reason = ReasonIdle
	case !c.gotByte && !c.initialEnd.IsZero() && !now.Before(c.initialEnd):
		reason = ReasonNoData
	}
	b := c.b
	if reason != "" && c.held != nil {
		// The capture ends for another reason: commit the match held.
		b.mu.RLock()
		r, err := c.matchedLocked(*c.held)
		b.mu.RUnlock()
		return r, true, err
	}
	if reason != "" || bufErr != nil {
		b.mu.RLock()
		r := c.resultLocked(end, reason)
		b.mu.RUnlock()
		if reason != "" {
			return r, true, nil
		}
		return r, true, fmt.Errorf("%s: %w", captureWhat, bufErr)
	}
	return Capture{}, false, nil
}

// timer returns a channel that receives at the capture's nearest deadline
// (its Duration window, IdleTimeout, InitialTimeout or holdUntil) counted
// from now, nil when there is none.
func (c *capture) timer(now, holdUntil time.Time) <-chan time.Time {
	var next time.Time
	consider := func(t time.Time) {
		if !t.IsZero() && (next.IsZero() || t.Before(next)) {
			next = t
		}
	}
	consider(c.windowEnd)
	if c.gotByte && c.opt.IdleTimeout > 0 {
		consider(c.lastSeen.Add(c.opt.IdleTimeout))
	}
	if !c.gotByte {
		consider(c.initialEnd)
	}
	consider(holdUntil)
	var timerC <-chan time.Time
	if !next.IsZero() {
		c.stop()
		timerC, c.stopTimer = c.b.clock.Timer(next.Sub(now))
	}
	return timerC
}

// resultLocked builds the Capture of the bytes up to end; the caller holds
// mu.
func (c *capture) resultLocked(end int64, reason string) Capture {
	b := c.b
	start := max(c.from, b.start)
	end = max(end, start)
	return Capture{Data: bytes.Clone(b.slice(start, end)), Start: start, End: end, Reason: reason}
}

// matchedLocked builds the result of a fail_on or until match; the caller
// holds mu.
func (c *capture) matchedLocked(f found) (Capture, error) {
	opt := c.opt
	if f.k < len(opt.FailOn) {
		return c.resultLocked(f.loc[1], ""), c.b.failOnLocked(opt.FailOn[f.k], f)
	}
	i := f.k - len(opt.FailOn)
	r := c.resultLocked(f.loc[1], ReasonUntil)
	r.Until = &Match{
		Index:  i,
		Start:  f.loc[0],
		End:    f.loc[1],
		From:   c.from,
		Data:   r.Data,
		Groups: c.b.groupsLocked(f),
		Names:  opt.Until[i].SubexpNames(),
	}
	return r, nil
}

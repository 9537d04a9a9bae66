package stream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
)

// Match is a successful Expect.
type Match struct {
	// Index is the index into want of the pattern that matched.
	Index int
	// Start and End are the absolute offsets of the match; End is the
	// cursor from which a following expect continues.
	Start, End int64
	// From is where the search began: the from given to Expect, moved
	// forward to Start() if those bytes were already dropped.
	From int64
	// Data holds the bytes from From to End, what arrived up to and
	// including the match. It begins later than From if bytes were dropped
	// while waiting (see NewBuffer's capacity).
	Data []byte
	// Groups holds the text of the whole match and then of each submatch
	// ("" for a group that did not participate).
	Groups []string
	// Names holds the pattern's SubexpNames, parallel to Groups.
	Names []string
}

// FailOnError reports that a fail_on pattern appeared in the output.
type FailOnError struct {
	Pattern Pattern
	// Offset is the absolute offset where the match starts.
	Offset int64
	// Line is the line containing the match, as much of it as had arrived
	// and at most a few hundred bytes, escaped with Quote.
	Line string
}

// Error returns `output matched fail_on pattern "HardFault": "<line>"`.
func (e *FailOnError) Error() string {
	return fmt.Sprintf("output matched fail_on pattern %s: \"%s\"", e.Pattern.describe(), e.Line)
}

// maxLineContext bounds how far Line reaches on each side of a match.
const maxLineContext = 256

// lineAt returns the line around [s, e), quoted; the caller holds mu.
func (b *Buffer) lineAt(s, e int64) string {
	lo := max(b.start, s-maxLineContext)
	hi := min(b.end, e+maxLineContext)
	s = max(s, b.start)
	e = min(max(e, s), b.end)
	before := b.slice(lo, s)
	if i := bytes.LastIndexByte(before, '\n'); i >= 0 {
		lo += int64(i) + 1
	}
	after := b.slice(e, hi)
	if i := bytes.IndexByte(after, '\n'); i >= 0 {
		hi = e + int64(i)
	}
	line := b.slice(lo, hi)
	line = bytes.TrimSuffix(line, []byte("\r"))
	return Quote(line)
}

func (b *Buffer) failOnLocked(p Pattern, f found) *FailOnError {
	return &FailOnError{Pattern: p, Offset: f.loc[0], Line: b.lineAt(f.loc[0], f.loc[1])}
}

// ctxError wraps ctx's error and, when the context was cancelled with a
// different cause, that cause too, so that both errors.Is(err,
// context.DeadlineExceeded) and errors.Is(err, cause) hold.
func ctxError(what string, ctx context.Context) error {
	err := ctx.Err()
	cause := context.Cause(ctx)
	if cause == nil || errors.Is(cause, err) {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: %w (%w)", what, cause, err)
}

// BufferError reports that a regexp match may have begun before the oldest
// byte a Buffer keeps: a match longer than the Buffer's capacity cannot be
// found, so the search gives up rather than wait for its deadline.
type BufferError struct {
	Pattern Pattern
	// Capacity is the Buffer's capacity in bytes.
	Capacity int
	// Start is the offset where the oldest match still possible began.
	Start int64
}

// Error returns `a match of /BEGIN.*END/ may have begun at offset 12, before
// the last 1 MiB received, which is all that is kept`.
func (e *BufferError) Error() string {
	return fmt.Sprintf("a match of %s may have begun at offset %d, before the last %s received, which is all that is kept",
		e.Pattern.describe(), e.Start, FormatSize(e.Capacity))
}

// FormatSize renders n bytes for messages: "1 MiB", "64 KiB", "1500 bytes".
func FormatSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// groupsLocked returns the text of each submatch of f.
func (b *Buffer) groupsLocked(f found) []string {
	g := make([]string, len(f.loc)/2)
	for i := range g {
		s, e := f.loc[2*i], f.loc[2*i+1]
		if s < 0 || s < b.start {
			continue
		}
		g[i] = string(b.slice(s, e))
	}
	return g
}

// Expect waits for one of want to appear in the stream at or after offset
// from and returns the earliest match (the lowest index wins a tie). Bytes
// already retained are searched first, then each chunk as it arrives, with
// an overlap so that a match straddling chunks is found: len(pattern)-1
// bytes for a literal; for a regexp, the bytes since the oldest match still
// possible began, however long ago, as long as the Buffer keeps them. When
// it no longer does, Expect returns a *BufferError: the match could be
// longer than the Buffer.
//
// A literal match is returned at once. A regexp match that bytes still to
// come could change (it could grow, as `\d+` could, or a match that starts
// earlier could still complete, or it relies on \b or \B at the last byte
// received; $ is taken to hold there) is held until a byte arrives that decides it, then searched
// again; or until the stream has been quiet for the settle time (WithSettle;
// DefaultSettle, 1 s, when ctx sets none); or until ctx's deadline passes;
// or until the Buffer's error is set. Whichever comes first commits the
// match as it stands. A match that a delimiter ends is never held.
//
// If a failOn pattern matches at or before the earliest want match, Expect
// returns a *FailOnError. With no want patterns Expect returns only on a
// failOn match or an error. If the Buffer's error is set (SetErr), Expect
// returns an error wrapping it, once the bytes already appended held no
// match. When ctx is done it returns an error wrapping ctx.Err() and, if
// different, context.Cause(ctx).
func (b *Buffer) Expect(ctx context.Context, from int64, want []Pattern, failOn []Pattern) (Match, error) {
	b.mu.RLock()
	from = max(from, b.start)
	b.mu.RUnlock()
	e := &expecter{
		s:   newSearch(from, failOn, want),
		ctx: ctx, settle: settleOf(ctx), lookFree: heldLookFree,
		from: from, want: want, failOn: failOn,
	}
	var stopTimer func() bool
	idled := false
	defer func() {
		if stopTimer != nil {
			stopTimer()
		}
	}()
	for {
		b.mu.Lock()
		if e.done {
			// Append decided while this goroutine was waking up.
			b.mu.Unlock()
			return e.m, e.err
		}
		done, held, hold := b.decideLocked(e)
		if done {
			b.dropLocked(e)
			b.mu.Unlock()
			return e.m, e.err
		}
		// Append searches what comes for e, decides at once when it can
		// and wakes e.
		ch := b.waitLocked(e)
		b.mu.Unlock()
		var timerC <-chan time.Time
		if hold > 0 {
			if stopTimer != nil {
				stopTimer()
			}
			timerC, stopTimer = b.clock.Timer(hold)
		}
		if !idled {
			idled = true
			Idle(ctx)
		}
		waitStart := time.Now()
		woken := hold == 0 && b.spinWait(ch, ctx.Done())
		if !woken {
			select {
			case <-ch:
				woken = true
			case <-timerC:
			case <-ctx.Done():
				b.waited(time.Since(waitStart))
				if !held {
					b.mu.Lock()
					b.dropLocked(e)
					done := e.done
					b.mu.Unlock()
					if done {
						return e.m, e.err
					}
					return Match{}, ctxError("wait for "+describeAll(want), ctx)
				}
				// Search again: a deadline commits the match held, a
				// cancellation wins over it.
			}
		}
		if woken && e.done {
			// An answer, which tells how fast the device answers (a
			// held match woken to look again does not). Append decided
			// e before it closed ch, which orders the two: no need to
			// take the lock the reader may still hold.
			b.waited(time.Since(waitStart))
			return e.m, e.err
		}
	}
}

// decideLocked searches the bytes e has not searched yet and decides e
// when it can: done, with e.m or e.err set. Otherwise held says whether a
// match is held (see Expect), for hold more. The caller holds mu for
// writing.
func (b *Buffer) decideLocked(e *expecter) (done, held bool, hold time.Duration) {
	if e.heldCost > 0 && e.heldCost > e.lookFree && e.ctx.Err() == nil && b.err == nil {
		// A long match held while bytes keep coming: look again only
		// when the new bytes may have decided it (see followLocked).
		if left := b.last.Add(e.settle).Sub(b.clock.Now()); left > 0 && e.s.followLocked(b, e.heldStart) {
			return false, true, left
		}
	}
	e.heldCost = 0
	before := e.s.scanned
	f, ok, err := e.s.scanLocked(b, b.end)
	if err != nil {
		e.decided(Match{}, fmt.Errorf("wait for %s: %w", describeAll(e.want), err))
		return true, false, 0
	}
	ctxErr := e.ctx.Err()
	if ok && ctxErr != nil && !errors.Is(ctxErr, context.DeadlineExceeded) {
		// A watcher may have cancelled ctx on seeing these very bytes
		// (Watch runs before the bytes become visible here): the
		// cancellation wins over a match in them.
		e.decided(Match{}, ctxError("wait for "+describeAll(e.want), e.ctx))
		return true, false, 0
	}
	hold = e.s.holdLocked(b, f, ok, ctxErr, e.settle)
	if ok && hold <= 0 {
		if f.k < len(e.failOn) {
			e.decided(Match{}, b.failOnLocked(e.failOn[f.k], f))
			return true, false, 0
		}
		p := e.want[f.k-len(e.failOn)]
		e.decided(Match{
			Index:  f.k - len(e.failOn),
			Start:  f.loc[0],
			End:    f.loc[1],
			From:   e.from,
			Data:   bytes.Clone(b.slice(max(e.from, b.start), f.loc[1])),
			Groups: b.groupsLocked(f),
			Names:  p.SubexpNames(),
		}, nil)
		return true, false, 0
	}
	if err := b.err; err != nil {
		e.decided(Match{}, fmt.Errorf("wait for %s: %w", describeAll(e.want), err))
		return true, false, 0
	}
	if ok {
		e.heldStart, e.heldCost = f.loc[0], e.s.scanned-before
	}
	return false, ok, hold
}

// holdLocked returns how much longer the match f (ok false: none) must be
// held before it is committed: 0 when it is final, the settle time is 0,
// ctx is done or the Buffer's error is set, else what is left of the settle
// time counted from the last byte appended. The caller holds mu.
func (s *search) holdLocked(b *Buffer, f found, ok bool, ctxErr error, settle time.Duration) time.Duration {
	if !ok || settle <= 0 || ctxErr != nil || b.err != nil || s.finalLocked(b, f, b.end) {
		return 0
	}
	return max(b.last.Add(settle).Sub(b.clock.Now()), 0)
}

// Find returns the earliest match of any of want in data, the lowest index
// winning a tie, as Expect finds it in a stream that holds data from
// offset 0 and then ends; Start and End are offsets into data. ok is false
// when none matches. data is the whole text: for a part of a longer text,
// see FindCut.
func Find(data []byte, want []Pattern) (m Match, ok bool) {
	var best []int
	for i, p := range want {
		loc := p.Find(data)
		if loc == nil || best != nil && loc[0] >= best[0] {
			continue
		}
		best, m.Index = loc, i
	}
	if best == nil {
		return Match{}, false
	}
	m.Start, m.End = int64(best[0]), int64(best[1])
	m.Names = want[m.Index].SubexpNames()
	for g := 0; g+1 < len(best); g += 2 {
		if best[g] < 0 {
			m.Groups = append(m.Groups, "")
			continue
		}
		m.Groups = append(m.Groups, string(data[best[g]:best[g+1]]))
	}
	return m, true
}

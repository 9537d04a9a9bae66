package stream

import (
	"slices"
	"sync/atomic"
	"time"
)

// Hit is one occurrence of a watched pattern.
type Hit struct {
	Pattern Pattern
	// Index is the index of Pattern in the slice given to Watch.
	Index int
	// Offset is the absolute offset where the occurrence starts.
	Offset int64
	// Line is the line containing the occurrence, as much of it as had
	// arrived and at most a few hundred bytes, escaped with Quote.
	Line string
	// At is the time given to the Append that completed the occurrence.
	At time.Time
}

type watcher struct {
	pats      []Pattern
	s         *search // guarded by Buffer.mu
	settle    time.Duration
	fn        func(Hit)
	cancelled atomic.Bool
	// held is set while an occurrence that more bytes could change waits
	// (see Expect), and stopHeld stops the timer that commits it once the
	// stream has been quiet for settle; both guarded by Buffer.mu.
	held     bool
	stopHeld func() bool
}

type pendingHit struct {
	w   *watcher
	hit Hit
}

// Watch calls fn for every occurrence of any of patterns in the bytes
// appended from now on, each occurrence once, in the order of their
// offsets. Occurrences of one pattern do not overlap. The search overlaps
// chunks like Expect's, so an occurrence split across two Appends is found.
//
// A regexp occurrence that more bytes could still change (`\bfail\b` on
// "fail" may become "failed", `panic: .*` grows to the end of its line) is
// reported once a byte decides it, or when the stream has been quiet for
// DefaultSettle; its Line then holds the whole occurrence. fn then runs on
// a timer's goroutine, still with the Buffer locked.
//
// fn runs inside Append, on the appending goroutine, with the Buffer
// locked, before any waiter or reader can see the bytes: a sequence-wide
// fail_on hears of a fault before a concurrent expect can match what
// follows it. fn must therefore be cheap and must not block or call methods
// of this Buffer (calling the returned cancel is allowed); record the hit or
// cancel a context and return.
//
// cancel stops further calls; it is idempotent and may be called from fn.
func (b *Buffer) Watch(patterns []Pattern, fn func(Hit)) (cancel func()) {
	w := &watcher{
		pats:   slices.Clone(patterns),
		settle: DefaultSettle,
		fn:     fn,
	}
	b.mu.Lock()
	w.s = newSearch(b.end, w.pats)
	b.watchers = append(slices.Clip(b.watchers), w)
	b.mu.Unlock()

	return func() {
		if w.cancelled.Swap(true) {
			return
		}
		// The list is only read under mu; removing the watcher later,
		// outside fn, keeps cancel safe to call from fn.
		go b.removeWatcher(w)
	}
}

func (b *Buffer) removeWatcher(w *watcher) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if w.stopHeld != nil {
		w.stopHeld()
	}
	b.watchers = slices.DeleteFunc(slices.Clone(b.watchers), func(x *watcher) bool { return x == w })
}

// settleWatch runs when a watcher's held occurrence may have settled: it
// reports it if the stream has been quiet for the settle time since, else
// waits for the rest of it.
func (b *Buffer) settleWatch(w *watcher) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !w.held || w.cancelled.Load() {
		return
	}
	if left := b.last.Add(w.settle).Sub(b.clock.Now()); left > 0 {
		w.stopHeld = b.clock.AfterFunc(left, func() { b.settleWatch(w) })
		return
	}
	for _, h := range w.scanLocked(b, b.last, nil, true) {
		if !w.cancelled.Load() {
			w.fn(h.hit)
		}
	}
}

// scanLocked appends to hits the occurrences completed by the bytes just
// appended; with settled, also those that more bytes could still change.
// The caller holds mu for writing.
func (w *watcher) scanLocked(b *Buffer, at time.Time, hits []pendingHit, settled bool) []pendingHit {
	if w.cancelled.Load() {
		return hits
	}
	first := len(hits)
	end := b.end
	held := false
	for k, pat := range w.pats {
		p := pat.p
		if p == nil {
			continue
		}
		for {
			// An occurrence that began before the oldest byte kept is
			// given up: a watch has no step to fail.
			loc, _ := w.s.findLocked(b, k, end, true)
			if loc == nil {
				break
			}
			s, e := loc[0], loc[1]
			if !settled && p.prog != nil && w.settle > 0 {
				one := &search{pats: []*pattern{p}, next: []int64{w.s.next[k]}}
				if !one.finalLocked(b, found{k: 0, loc: []int64{s, e}}, end) {
					held = true
					break // searched again when bytes arrive or settle
				}
			}
			hits = append(hits, pendingHit{w: w, hit: Hit{
				Pattern: pat,
				Index:   k,
				Offset:  s,
				Line:    b.lineAt(s, e),
				At:      at,
			}})
			if e == s {
				e++ // an empty match must not repeat forever
			}
			w.s.restartLocked(b, k, e)
		}
	}
	if held && !w.held && w.stopHeld == nil {
		w.stopHeld = b.clock.AfterFunc(w.settle, func() { b.settleWatch(w) })
	}
	w.held = held
	if !held && w.stopHeld != nil {
		w.stopHeld()
		w.stopHeld = nil
	}
	slices.SortStableFunc(hits[first:], func(x, y pendingHit) int {
		switch {
		case x.hit.Offset < y.hit.Offset:
			return -1
		case x.hit.Offset > y.hit.Offset:
			return 1
		}
		return 0
	})
	return hits
}

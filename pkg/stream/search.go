// The incremental search behind Expect and Capture: every byte searched once
// plus each pattern's overlap, the earliest match winning.

package stream

import (
	"unicode/utf8"
)

// search is an incremental search for several patterns. Each pattern keeps
// the offset before which it has been ruled out, so every byte is searched
// once plus the pattern's overlap: a literal's length minus one, and for a
// regexp the bytes since the oldest match still possible began, which its
// tracker knows without searching them again.
type search struct {
	pats []*pattern
	next []int64
	trk  []*tracker // per pattern; nil for a literal
	// bot is where the search began: ^ and \A hold there, as at the
	// start of a text.
	bot int64
	// scanned counts the bytes examined, for tests of the search's cost.
	scanned int64
}

func newSearch(from int64, lists ...[]Pattern) *search {
	s := &search{bot: from}
	for _, l := range lists {
		for _, p := range l {
			var t *tracker
			if p.p != nil && p.p.prog != nil {
				t = newTracker(p.p, from)
			}
			s.pats = append(s.pats, p.p)
			s.next = append(s.next, from)
			s.trk = append(s.trk, t)
		}
	}
	return s
}

// found is a match of pattern k at absolute offsets loc (pairs, -1 for a
// group that did not participate).
type found struct {
	k   int
	loc []int64
}

// scanLocked searches the bytes up to limit (clamped to end) that no
// pattern has searched yet and returns the earliest match, the lowest k
// winning a tie (callers put fail_on patterns first so that they win), or a
// *BufferError. The caller holds mu (read or write).
func (s *search) scanLocked(b *Buffer, limit int64) (found, bool, error) {
	limit = min(limit, b.end)
	best := found{k: -1}
	for k, p := range s.pats {
		if p == nil {
			continue // the zero Pattern matches nothing
		}
		if best.k >= 0 && s.next[k] >= best.loc[0] {
			continue // cannot beat the match already found
		}
		loc, err := s.findLocked(b, k, limit, false)
		if err != nil {
			return found{}, false, err
		}
		if loc == nil || best.k >= 0 && loc[0] >= best.loc[0] {
			continue
		}
		best = found{k: k, loc: loc}
	}
	return best, best.k >= 0, nil
}

// findLocked searches pattern k in the bytes up to limit from where it was
// last ruled out and returns its leftmost match as absolute offsets, or
// nil; it moves s.next[k] to where a later match can begin. A regexp match
// that may have begun before the oldest byte kept is a *BufferError, or,
// with forget, is given up for the matches after the oldest byte. The
// caller holds mu and has clamped limit to end.
func (s *search) findLocked(b *Buffer, k int, limit int64, forget bool) ([]int64, error) {
	p, t := s.pats[k], s.trk[k]
	if t == nil {
		from := max(s.next[k], b.start)
		if from > limit {
			return nil, nil
		}
		data := b.slice(from, limit)
		s.scanned += int64(len(data))
		loc := p.find(data)
		if loc == nil {
			s.next[k] = p.resume(from, limit)
			return nil, nil
		}
		return absolute(loc, from), nil
	}
	if t.live() < b.start {
		if !forget && len(t.threads) > 0 {
			return nil, &BufferError{Pattern: Pattern{p}, Capacity: b.capacity, Start: t.live()}
		}
		// Bytes dropped before any thread needed them were lost
		// unsearched: a chunk longer than the Buffer.
		t.drop(b.start)
	}
	if t.following {
		// Following a held match (see followLocked): package regexp
		// looks from where the tracker last saw a match may begin.
		if s.next[k] < b.start {
			return nil, &BufferError{Pattern: Pattern{p}, Capacity: b.capacity, Start: s.next[k]}
		}
		if loc := s.findAt(b, p, s.next[k], limit); loc != nil {
			return loc, nil
		}
		// The match held is gone (it needed the end of what had
		// arrived): follow the bytes again from there, once.
		s.restartLocked(b, k, s.next[k])
		t.following = false
	}
	if t.pos > limit {
		return nil, nil // past an empty match at the end (see Watch)
	}
	hit, n := t.advance(b.slice(t.pos, limit))
	s.scanned += int64(n)
	if hit < 0 {
		s.next[k] = t.live()
		return nil, nil
	}
	s.next[k] = hit
	loc := s.findAt(b, p, hit, limit)
	if loc == nil {
		// The tracker saw a match package regexp does not: they judged an
		// assertion at hit differently, where the oldest bytes were
		// dropped. The tracker holds there, so package regexp looks again
		// with the next bytes.
		return nil, nil
	}
	return loc, nil
}

// restartLocked makes pattern k search again from offset at, as a new
// search with the bytes before at as context. The caller holds mu.
func (s *search) restartLocked(b *Buffer, k int, at int64) {
	s.next[k] = at
	if t := s.trk[k]; t != nil {
		prev, c := rune(-1), min(at, b.end)
		if c > b.start {
			prev, _ = utf8.DecodeLastRune(b.slice(max(b.start, c-utf8.UTFMax), c))
		}
		t.reset(at, prev)
	}
}

// findAt runs p's regexp over the bytes [from, limit) and returns its
// leftmost match as absolute offsets, or nil. Where from is not where the
// search began, the rune before it is context, so that ^ and \b are judged
// there as in the whole stream.
func (s *search) findAt(b *Buffer, p *pattern, from, limit int64) []int64 {
	if from <= s.bot || from <= b.start || p.afterRegexp() == nil {
		data := b.slice(from, limit)
		s.scanned += int64(len(data))
		return absolute(p.find(data), from)
	}
	_, w := utf8.DecodeLastRune(b.slice(max(b.start, from-utf8.UTFMax), from))
	lo := from - int64(w)
	data := b.slice(lo, limit)
	s.scanned += int64(len(data))
	loc := p.afterRegexp().FindSubmatchIndex(data)
	if loc == nil {
		return nil
	}
	// The match proper begins after the rune of context.
	_, w = utf8.DecodeRune(data[loc[0]:])
	loc[0] += w
	return absolute(loc, lo)
}

// absolute turns index pairs into data, which begins at offset base, into
// offsets; nil stays nil.
func absolute(loc []int, base int64) []int64 {
	if loc == nil {
		return nil
	}
	abs := make([]int64, len(loc))
	for i, v := range loc {
		abs[i] = -1
		if v >= 0 {
			abs[i] = base + int64(v)
		}
	}
	return abs
}

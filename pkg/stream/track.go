package stream

import (
	"bytes"
	"regexp/syntax"
	"unicode/utf8"
)

// A regexp search over a stream must find a match however long it is and
// however many chunks it arrived in, without searching the same bytes
// again for every chunk: rescanning from where a long match began turns
// `BEGIN.*FINISH` over a megabyte into a quadratic search. A tracker runs
// the pattern's program over each byte once, as the bytes arrive, and
// keeps the threads alive after the last one: where they started is the
// earliest place a match can still begin (the live start), and package
// regexp is called only when a thread reaches a match, from that thread's
// start, to find the match and its groups as everywhere else.
//
// Where nothing is in progress, the tracker skips ahead to the next byte
// that can begin a match (with bytes.Index when every match begins with
// the same literal), so a waiting search over bulk output costs about what
// package regexp's own prefix scan costs.

// tracker follows one regexp through the bytes of a Buffer from a
// search's start. The caller holds the Buffer's lock.
type tracker struct {
	p *pattern
	// pos is the offset up to which the program has run; threads hold the
	// threads that consumed the bytes before it, in priority order (which
	// is also the order of their starts), not yet expanded at pos, whose
	// assertions depend on the rune at pos.
	pos     int64
	prev    rune // the rune before pos; -1 at the start of the search
	threads []thread
	spare   []thread
	// following is set while the tracker follows a match held (see
	// search.followLocked): it runs only the threads that could change
	// that match.
	following bool
}

// thread is an instruction that a thread which started at start is to
// enter at the tracker's position.
type thread struct {
	pc    uint32
	start int64
}

func newTracker(p *pattern, from int64) *tracker {
	return &tracker{p: p, pos: from, prev: -1}
}

// live returns the earliest offset at which a match can still start: the
// start of the oldest thread alive, else the tracker's position.
func (t *tracker) live() int64 {
	if len(t.threads) > 0 {
		return t.threads[0].start
	}
	return t.pos
}

// reset restarts the tracker at pos with nothing in progress; prev is the
// rune before pos, -1 for none.
func (t *tracker) reset(pos int64, prev rune) {
	t.pos, t.prev, t.threads, t.following = pos, prev, t.threads[:0], false
}

// advance runs the program over data, the bytes from the tracker's
// position up to the end of what arrived, and returns the offset from
// which package regexp must search because a match may end in them: the
// start of the oldest thread alive when a thread reached a match, or, for
// a match that needs the end of what arrived (`> $`), when the text ends
// there. It returns -1 when no match can have ended. On a match the
// tracker stays at the position where it was seen, so that it is seen
// again until the caller moves the tracker on. A rune cut short at the end
// of data waits for its other bytes, though package regexp would take its
// bytes as they are, and so does the look at the end. n is how many bytes
// advance examined.
func (t *tracker) advance(data []byte) (hit int64, n int) {
	p := t.p
	m := p.getVM()
	defer p.vms.Put(m)
	i := 0
	for i < len(data) {
		if len(t.threads) == 0 && p.skip != nil {
			if j := p.skip(data, i); j > i {
				t.prev, _ = utf8.DecodeLastRune(data[:j])
				i = j
				if i >= len(data) {
					break
				}
			}
		}
		if !utf8.FullRune(data[i:]) {
			break // the rest of the rune is on its way
		}
		r, w := utf8.DecodeRune(data[i:])
		next, hit := t.step(m, t.threads, t.spare[:0], t.pos+int64(i), t.prev, r)
		if hit >= 0 {
			t.pos += int64(i)
			return hit, i
		}
		t.spare, t.threads = t.threads, next
		t.prev = r
		i += w
	}
	t.pos += int64(i)
	// What package regexp sees at the end: the bytes of a rune cut short
	// one by one, then the end of the text, where $ and \b hold.
	threads, prev := t.threads, t.prev
	var buf [2][utf8.UTFMax * 8]thread
	for k, c := range data[i:] {
		r := rune(utf8.RuneError)
		if c < utf8.RuneSelf {
			r = rune(c)
		}
		next, hit := t.step(m, threads, buf[k%2][:0], t.pos+int64(k), prev, r)
		if hit >= 0 {
			return hit, len(data)
		}
		threads, prev = next, r
	}
	_, hit = t.step(m, threads, nil, t.pos+int64(len(data)-i), prev, -1)
	return hit, len(data)
}

// step expands threads, and a thread starting there, at offset pos under
// the assertions between the runes prev and r, and appends to next those
// that consume r, in priority order. r -1 is the end of the text, where no
// thread consumes. hit is where the oldest thread started when one reached
// a match, else -1.
func (t *tracker) step(m *vm, threads, next []thread, pos int64, prev, r rune) (_ []thread, hit int64) {
	prog := t.p.prog
	c := syntax.EmptyOpContext(prev, r)
	if r < 0 {
		c |= endOps
	}
	q := &m.q0
	defer q.clear()
	for _, th := range threads {
		m.add(q, th.pc, th.start, cond{c, c})
	}
	m.add(q, uint32(prog.Start), pos, cond{c, c})
	for _, e := range q.dense {
		inst := &prog.Inst[e.pc]
		if inst.Op == syntax.InstMatch {
			return next, q.dense[0].start
		}
		if r >= 0 && takes(inst, r) {
			next = append(next, thread{pc: inst.Out, start: e.start})
		}
	}
	return next, -1
}

// skipFunc returns the index of the first byte at or after i in data where
// a match may begin, or len(data); a rune cut short at the end counts as
// a place to begin, since the rest of it is on its way.
type skipFunc func(data []byte, i int) int

// newSkip returns how the tracker of prog skips bytes while no thread is
// in progress, or nil when every position must be tried: when the program
// can match without consuming a byte. Every match of re begins with
// prefix, when it is not empty.
func newSkip(prog *syntax.Prog, prefix string) skipFunc {
	var first [256]bool
	seen := make([]bool, len(prog.Inst))
	var walk func(pc uint32) bool
	walk = func(pc uint32) bool {
		if pc == 0 || seen[pc] {
			return true
		}
		seen[pc] = true
		inst := &prog.Inst[pc]
		switch inst.Op {
		case syntax.InstMatch:
			return false
		case syntax.InstAlt, syntax.InstAltMatch:
			return walk(inst.Out) && walk(inst.Arg)
		case syntax.InstNop, syntax.InstCapture, syntax.InstEmptyWidth:
			return walk(inst.Out)
		case syntax.InstFail:
			return true
		}
		// A byte >= 0x80 begins a rune that may match, or is invalid
		// UTF-8, which decodes as U+FFFD: keep all of them when the
		// instruction may take any rune beyond ASCII.
		wide := inst.Op == syntax.InstRuneAny || inst.Op == syntax.InstRuneAnyNotNL ||
			syntax.Flags(inst.Arg)&syntax.FoldCase != 0
		for _, r := range inst.Rune {
			wide = wide || r >= utf8.RuneSelf
		}
		for c := 0; c < 256; c++ {
			switch {
			case c >= utf8.RuneSelf:
				first[c] = first[c] || wide
			case inst.Op == syntax.InstRuneAny:
				first[c] = true
			case inst.Op == syntax.InstRuneAnyNotNL:
				first[c] = first[c] || c != '\n'
			default:
				first[c] = first[c] || inst.MatchRune(rune(c))
			}
		}
		return true
	}
	if !walk(uint32(prog.Start)) {
		return nil
	}
	if lit := []byte(prefix); len(lit) > 1 {
		return func(data []byte, i int) int {
			if j := bytes.Index(data[i:], lit); j >= 0 {
				return i + j
			}
			// A prefix cut short at the end may complete.
			for j := max(i, len(data)-len(lit)+1); j < len(data); j++ {
				if bytes.HasPrefix(lit, data[j:]) {
					return j
				}
			}
			return len(data)
		}
	}
	return func(data []byte, i int) int {
		for ; i < len(data); i++ {
			if first[data[i]] {
				return i
			}
		}
		return i
	}
}

// drop forgets the threads that began before start, the oldest byte the
// Buffer keeps, and moves the tracker there if it had not reached it.
func (t *tracker) drop(start int64) {
	if t.pos < start {
		t.reset(start, -1)
		return
	}
	i := 0
	for i < len(t.threads) && t.threads[i].start < start {
		i++
	}
	t.threads = append(t.threads[:0], t.threads[i:]...)
}

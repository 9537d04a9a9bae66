package stream

import (
	"regexp/syntax"
	"unicode/utf8"
)

// A match that is held (see Expect) is looked at again whenever bytes
// arrive: package regexp runs from where it begins and the threads still
// alive are counted, which costs its length. For a long match held while
// output keeps coming (a greedy BEGIN[^#]*END with more output after END)
// that is a pass over the whole match for every chunk. Instead, each
// pattern's tracker follows only the threads that began at or before the
// match held: while one of them is alive, the match may still change and
// nothing is decided, so no look is needed; when none is, one look
// decides it.

// heldLookFree is the cost, in bytes examined, of a look at a held match
// below which the look is made for every chunk, as it is cheap.
const heldLookFree = 64 << 10

// followLocked advances the trackers over the bytes that arrived and
// reports whether the match held at st may still change, so that looking
// again can wait: some pattern has a thread that began at or before st
// still alive. false means a look is due: nothing can change the match any
// more, or a pattern cannot tell. The caller holds mu for writing.
func (s *search) followLocked(b *Buffer, st int64) bool {
	alive := false
	for k, p := range s.pats {
		t := s.trk[k]
		switch {
		case p == nil:
			continue
		case t == nil:
			if s.next[k] <= st {
				return false // a literal may still match before st
			}
			continue
		case t.live() < b.start || t.pos > b.end:
			return false
		}
		if !t.following {
			t.following = true
			t.threads = dropAfter(t.threads, st)
		}
		n := t.follow(b.slice(t.pos, b.end))
		s.scanned += int64(n)
		alive = alive || len(t.threads) > 0
	}
	return alive
}

// dropAfter removes the threads that began after st; threads are in the
// order of their starts.
func dropAfter(threads []thread, st int64) []thread {
	for i, th := range threads {
		if th.start > st {
			return threads[:i]
		}
	}
	return threads
}

// follow runs the tracker's threads over data, the bytes from its
// position, starting no new ones and letting those that reach a match end
// there, and returns how many bytes it examined. A rune cut short at the
// end waits for its other bytes.
func (t *tracker) follow(data []byte) int {
	p := t.p
	m := p.getVM()
	defer p.vms.Put(m)
	q := &m.q0
	i := 0
	for i < len(data) && len(t.threads) > 0 && utf8.FullRune(data[i:]) {
		r, w := utf8.DecodeRune(data[i:])
		op := syntax.EmptyOpContext(t.prev, r)
		for _, th := range t.threads {
			m.add(q, th.pc, th.start, cond{op, op})
		}
		next := t.spare[:0]
		for _, e := range q.dense {
			inst := &p.prog.Inst[e.pc]
			if takes(inst, r) {
				next = append(next, thread{pc: inst.Out, start: e.start})
			}
		}
		q.clear()
		t.spare, t.threads = t.threads, next
		t.prev = r
		i += w
	}
	if len(t.threads) == 0 {
		i = len(data) // nothing left to follow
	}
	t.pos += int64(i)
	return i
}

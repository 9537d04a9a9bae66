package stream

import (
	"context"
	"regexp/syntax"
	"time"
	"unicode/utf8"
)

// A regexp matched against a stream that is still arriving can match a
// prefix of what the device is printing: `adc=(\d+)` finds "adc=40" when
// "95" is still on the wire. This file decides whether a match is final,
// that is whether no bytes that may follow can change it; a match that is
// not final is held (see Expect) until it is, until the line goes quiet for
// the settle time, or until the wait's deadline.
//
// Go's regexp cannot say whether a match could grow, so a small Pike VM runs
// the pattern's compiled program (regexp/syntax) with the same
// leftmost-first rules as package regexp and looks at the threads still
// alive after the last byte: a thread that outranks the match found (it
// started earlier, or it is preferred at the same start, as a greedy
// repetition is) and could still consume a byte, or that waits on an
// assertion about the next byte (\b, \B), can change the match.

// DefaultSettle is how long Expect holds a match that more bytes could
// still change when no settle time is given (WithSettle): 1 s of silence on
// the line.
const DefaultSettle = time.Second

type settleKey struct{}

// WithSettle returns a context under which Expect and Capture commit a
// match that more bytes could still change once the stream has been quiet
// for d. d <= 0 commits every match at once, as a literal is.
func WithSettle(ctx context.Context, d time.Duration) context.Context {
	return context.WithValue(ctx, settleKey{}, max(d, 0))
}

// settleOf returns the settle time set by WithSettle, or DefaultSettle.
func settleOf(ctx context.Context) time.Duration {
	if d, ok := ctx.Value(settleKey{}).(time.Duration); ok {
		return d
	}
	return DefaultSettle
}

// finalLocked reports whether f, the match scanLocked found in the bytes up
// to limit, is final: no byte appended after limit can change which pattern
// matches first, where, or what its groups hold. A literal match is always
// final for its own pattern, and literals never hold back another
// pattern's match. The caller holds mu.
func (s *search) finalLocked(b *Buffer, f found, limit int64) bool {
	limit = min(limit, b.end)
	st := f.loc[0]
	for j, p := range s.pats {
		if p == nil || p.prog == nil {
			continue
		}
		// Threads that could still change the result started at or before
		// st (before it for a pattern that loses a tie) and are alive at
		// limit, so they span [start, limit); none started before the
		// pattern's live start, s.next[j].
		from := max(s.next[j], b.start)
		if from > limit {
			continue
		}
		lo := from
		data := b.slice(from, limit)
		s.scanned += int64(len(data))
		if p.noNewline {
			// No thread of this pattern spans a newline.
			for i := len(data) - 1; i >= int(lo-from); i-- {
				if data[i] == '\n' {
					lo = from + int64(i) + 1
					break
				}
			}
		}
		if lo > st || (lo == st && j > f.k) {
			if j == f.k && f.loc[1] > limit-int64(len(data))+int64(completeRunes(data)) {
				return false
			}
			continue
		}
		alive, earliest, n := p.pending(data, int(lo-from), int(st-from))
		if j == f.k {
			if alive || f.loc[1]-from > int64(n) {
				return false
			}
			continue
		}
		if alive && (from+int64(earliest) < st || j < f.k) {
			return false
		}
	}
	return true
}

// completeRunes returns the length of data without a UTF-8 sequence cut
// short at its end, whose remaining bytes may still arrive.
func completeRunes(data []byte) int {
	for i := len(data) - 1; i >= 0 && i >= len(data)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(data[i]) {
			if !utf8.FullRune(data[i:]) {
				return i
			}
			break
		}
	}
	return len(data)
}

// pending runs p's program over data as an unanchored leftmost-first
// search, starting threads at the positions lo through hi, and looks at the
// threads left when data ends. alive reports whether one of them outranks
// the match found so far (or exists, when none was found) and could still
// consume a byte or is waiting on an assertion about the next byte;
// earliest is where the earliest such thread started. A UTF-8 sequence cut
// short at the end of data counts as not arrived: n is the length examined.
func (p *pattern) pending(data []byte, lo, hi int) (alive bool, earliest int, n int) {
	n = completeRunes(data)
	data = data[:n]
	m := p.getVM()
	defer func() {
		m.q0.clear()
		m.q1.clear()
		p.vms.Put(m)
	}()
	clist, nlist := &m.q0, &m.q1
	prev := rune(-1)
	if lo > 0 {
		prev, _ = utf8.DecodeLastRune(data[:lo])
	}
	matched := false
	for pos := lo; ; {
		var r rune = -1
		w := 0
		if pos < n {
			r, w = utf8.DecodeRune(data[pos:])
		}
		if !matched && pos <= hi {
			m.add(clist, uint32(p.prog.Start), int64(pos), newCond(prev, r, w == 0))
		}
		if w == 0 {
			// The end of what arrived: whatever outranks a match here
			// could still change it.
			earliest = -1
			for _, e := range clist.dense {
				switch {
				case e.pending:
				case p.prog.Inst[e.pc].Op == syntax.InstMatch:
					return earliest >= 0, earliest, n
				case !consumes(p.prog.Inst[e.pc].Op):
					continue
				}
				if earliest < 0 || int(e.start) < earliest {
					earliest = int(e.start)
				}
			}
			return earliest >= 0, earliest, n
		}
		var next rune = -1
		if pos+w < n {
			next, _ = utf8.DecodeRune(data[pos+w:])
		}
		c := newCond(r, next, pos+w == n)
	step:
		for _, e := range clist.dense {
			inst := &p.prog.Inst[e.pc]
			add := false
			switch inst.Op {
			case syntax.InstMatch:
				matched = true
				break step // lower-priority threads lose to this match
			default:
				add = takes(inst, r)
			}
			if add {
				m.add(nlist, inst.Out, e.start, c)
			}
		}
		clist.clear()
		clist, nlist = nlist, clist
		prev = r
		pos += w
		if matched && len(clist.dense) == 0 {
			return false, -1, n
		}
	}
}

func consumes(op syntax.InstOp) bool {
	switch op {
	case syntax.InstRune, syntax.InstRune1, syntax.InstRuneAny, syntax.InstRuneAnyNotNL:
		return true
	}
	return false
}

// cond is what the empty-width assertions know at one position. At the
// end of what arrived the next rune is unknown: sure holds the assertions
// true whatever follows (the end of the text included), maybe those true
// for some continuation.
//
// $ (with or without (?m)) and \z are the exception: at the end of what
// arrived they hold, as they do for package regexp at the end of its
// input, and they do not wait for the next byte. A prompt pattern such as
// `> $` then commits at once; a value that more bytes could extend (`\d+$`)
// is still held by its repetition.
type cond struct {
	sure, maybe syntax.EmptyOp
}

// endOps are the assertions taken as true at the end of what arrived.
const endOps = syntax.EmptyEndText | syntax.EmptyEndLine

func newCond(prev, next rune, atEnd bool) cond {
	if !atEnd {
		op := syntax.EmptyOpContext(prev, next)
		return cond{op, op}
	}
	// One representative of each kind of continuation: none, a newline, a
	// word character, anything else.
	sure, maybe := ^syntax.EmptyOp(0), syntax.EmptyOp(0)
	for _, r := range [...]rune{-1, '\n', 'a', ' '} {
		op := syntax.EmptyOpContext(prev, r)
		sure &= op
		maybe |= op
	}
	return cond{sure | endOps, maybe | endOps}
}

// entry is one thread of the VM: an instruction and where the thread
// started. pending marks an assertion whose truth depends on a byte that
// has not arrived.
type entry struct {
	pc      uint32
	start   int64
	pending bool
}

// queue is a sparse set of instructions in priority order.
type queue struct {
	sparse []uint32
	dense  []entry
}

func (q *queue) has(pc uint32) bool {
	i := q.sparse[pc]
	return int(i) < len(q.dense) && q.dense[i].pc == pc
}

func (q *queue) clear() { q.dense = q.dense[:0] }

type vm struct {
	prog   *syntax.Prog
	q0, q1 queue
}

func (m *vm) init() {
	n := len(m.prog.Inst)
	m.q0 = queue{sparse: make([]uint32, n), dense: make([]entry, 0, n)}
	m.q1 = queue{sparse: make([]uint32, n), dense: make([]entry, 0, n)}
}

// add puts pc and the instructions it leads to without consuming input
// into q, in priority order, for a thread that started at start.
func (m *vm) add(q *queue, pc uint32, start int64, c cond) {
	if pc == 0 {
		return // instruction 0 is Fail in every program
	}
	if q.has(pc) {
		return
	}
	q.sparse[pc] = uint32(len(q.dense))
	q.dense = append(q.dense, entry{pc: pc, start: start})
	inst := &m.prog.Inst[pc]
	switch inst.Op {
	case syntax.InstAlt, syntax.InstAltMatch:
		m.add(q, inst.Out, start, c)
		m.add(q, inst.Arg, start, c)
	case syntax.InstNop, syntax.InstCapture:
		m.add(q, inst.Out, start, c)
	case syntax.InstEmptyWidth:
		need := syntax.EmptyOp(inst.Arg)
		switch {
		case need&^c.sure == 0:
			m.add(q, inst.Out, start, c)
		case need&^c.maybe == 0:
			q.dense[len(q.dense)-1].pending = true
		}
	}
}

// FindCut is Find for data that was cut short: more bytes followed it that
// are not in data (the head of a long output whose middle was dropped).
// A match those bytes could have changed is not returned: cut is then true
// and ok false, since what the whole output gives is unknown.
func FindCut(data []byte, want []Pattern) (m Match, ok, cut bool) {
	m, ok = Find(data, want)
	if !ok {
		return m, false, false
	}
	b := NewBuffer(len(data) + 1)
	b.Append(time.Time{}, data)
	s := newSearch(0, want)
	b.mu.RLock()
	defer b.mu.RUnlock()
	f, found, err := s.scanLocked(b, b.end)
	if err == nil && found && s.finalLocked(b, f, b.end) {
		return m, true, false
	}
	return Match{}, false, true
}

// takes reports whether instruction inst of a compiled regexp takes rune
// r and moves on: r is one of its runes, or any rune (but a line break,
// for InstRuneAnyNotNL). Instructions that consume no rune take none.
func takes(inst *syntax.Inst, r rune) bool {
	switch inst.Op {
	case syntax.InstRune:
		return inst.MatchRune(r)
	case syntax.InstRune1:
		return r == inst.Rune[0]
	case syntax.InstRuneAny:
		return true
	case syntax.InstRuneAnyNotNL:
		return r != '\n'
	}
	return false
}

// getVM takes a machine for p's program from its pool, or makes one; put
// it back with p.vms.Put.
func (p *pattern) getVM() *vm {
	m, _ := p.vms.Get().(*vm)
	if m == nil {
		m = &vm{prog: p.prog}
		m.init()
	}
	return m
}

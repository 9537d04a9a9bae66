package stream

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultCapacity is the number of bytes a Buffer retains when NewBuffer is
// given a capacity <= 0: 1 MiB.
const DefaultCapacity = 1 << 20

// Buffer is a bounded record of a byte stream addressed by absolute offsets
// (cursors). It retains the most recent bytes up to its capacity and forgets
// older ones; End keeps counting, so cursors stay valid.
//
// One goroutine appends (a console's reader); any number of goroutines wait,
// read and match concurrently. The zero Buffer is not usable: call NewBuffer.
type Buffer struct {
	capacity int
	clock    clock // for settle times; tests replace it

	mu sync.RWMutex
	// data[lo:hi] holds the bytes at offsets [start, end). The backing array
	// grows up to twice the capacity; when full, the retained bytes move to
	// its front, which costs at most one copy per capacity bytes appended.
	data     []byte
	lo, hi   int
	start    int64
	end      int64
	last     time.Time
	err      error
	watchers []*watcher
	// expecters are the Expect calls waiting for bytes (see expecter).
	expecters []*expecter
	// lastWait is how long, in nanoseconds, the last Expect to wait on
	// this Buffer waited (see spinWait).
	lastWait atomic.Int64

	// nmu guards notify, the channel closed on the next change. It is
	// separate from mu so that a waiter can take the channel before it looks
	// at the data, which makes a missed wake-up impossible.
	nmu    sync.Mutex
	notify chan struct{}
}

// NewBuffer returns an empty Buffer retaining the last capacity bytes; a
// capacity <= 0 means DefaultCapacity (1 MiB). Memory use stays below about
// twice the capacity however many bytes are appended.
func NewBuffer(capacity int) *Buffer {
	if capacity <= 0 {
		capacity = DefaultCapacity
	}
	b := &Buffer{capacity: capacity, clock: realClock{}}
	return b
}

// clock is the time source of Expect's and Capture's timers.
type clock interface {
	Now() time.Time
	// Timer returns a channel that receives once d has passed, and a
	// function that stops it.
	Timer(d time.Duration) (<-chan time.Time, func() bool)
	// AfterFunc calls f in its own goroutine once d has passed; the
	// function returned stops it.
	AfterFunc(d time.Duration, f func()) (stop func() bool)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) Timer(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

func (realClock) AfterFunc(d time.Duration, f func()) (stop func() bool) {
	return time.AfterFunc(d, f).Stop
}

// Capacity returns the number of bytes the Buffer retains.
func (b *Buffer) Capacity() int { return b.capacity }

// Append records p as having arrived at time at. It copies p, reports new
// pattern occurrences to watchers (see Watch) and then wakes waiters.
// Append is meant to be called by a single goroutine.
func (b *Buffer) Append(at time.Time, p []byte) {
	if len(p) == 0 {
		return
	}
	b.mu.Lock()
	b.appendLocked(p)
	b.last = at
	var hits []pendingHit
	for _, w := range b.watchers {
		hits = w.scanLocked(b, at, hits, false)
	}
	// Watchers run before the lock is released so that no reader can see
	// these bytes before the watchers have heard of them.
	for _, h := range hits {
		if !h.w.cancelled.Load() {
			h.w.fn(h.hit)
		}
	}
	b.wakeExpectersLocked(false)
	b.mu.Unlock()
	b.wake()
}

// expecter is an Expect waiting for bytes. Append searches the new bytes
// for it, right after the watchers, and decides it when it can: during
// bulk output a waiting Expect costs no wake-up per chunk, and its match
// is taken before later bytes could push it out of the Buffer.
type expecter struct {
	s                *search
	ctx              context.Context
	settle           time.Duration
	from             int64
	want, failOn     []Pattern
	ch               chan struct{} // closed to wake the Expect
	registered, done bool
	m                Match // with err, the outcome once done
	err              error
	// heldCost is how many bytes the look that found a match held cost,
	// 0 when none is held, and heldStart where that match begins (see
	// decideLocked). Past lookFree, the match is followed rather than
	// looked at for every chunk (see followLocked).
	heldStart, heldCost, lookFree int64
}

func (e *expecter) decided(m Match, err error) {
	e.m, e.err, e.done = m, err, true
}

// wakeExpectersLocked decides each waiting Expect that the bytes appended
// decide, and wakes it; a match held (see Expect) wakes its Expect too, to
// look again. With all, every waiting Expect is woken, to look at the
// Buffer's error. The caller holds mu for writing.
func (b *Buffer) wakeExpectersLocked(all bool) {
	kept := b.expecters[:0]
	for _, e := range b.expecters {
		if done, held, _ := b.decideLocked(e); all || done || held {
			close(e.ch)
			e.registered = false
			continue
		}
		kept = append(kept, e)
	}
	clear(b.expecters[len(kept):])
	b.expecters = kept
}

// waitLocked registers e to be woken by Append or SetErr, unless it is
// already, and returns the channel that wakes it; the caller holds mu for
// writing.
func (b *Buffer) waitLocked(e *expecter) <-chan struct{} {
	if !e.registered {
		e.ch = make(chan struct{})
		e.registered = true
		b.expecters = append(b.expecters, e)
	}
	return e.ch
}

// dropLocked unregisters e; the caller holds mu for writing.
func (b *Buffer) dropLocked(e *expecter) {
	if !e.registered {
		return
	}
	e.registered = false
	if i := slices.Index(b.expecters, e); i >= 0 {
		b.expecters = slices.Delete(b.expecters, i, i+1)
	}
}

func (b *Buffer) appendLocked(p []byte) {
	n := len(p)
	b.end += int64(n)
	if n >= b.capacity {
		// Only the tail of p survives.
		p = p[n-b.capacity:]
		if len(b.data) < b.capacity {
			b.data = make([]byte, b.capacity)
		}
		copy(b.data, p)
		b.lo, b.hi = 0, b.capacity
		b.start = b.end - int64(b.capacity)
		return
	}
	// Forget the oldest bytes so that at most capacity remain.
	if over := b.hi - b.lo + n - b.capacity; over > 0 {
		b.lo += over
		b.start += int64(over)
	}
	if b.hi+n > len(b.data) {
		kept := b.hi - b.lo
		if len(b.data) < 2*b.capacity {
			size := max(2*len(b.data), kept+n, 4096)
			size = min(size, 2*b.capacity)
			nd := make([]byte, size)
			copy(nd, b.data[b.lo:b.hi])
			b.data = nd
		} else {
			copy(b.data, b.data[b.lo:b.hi])
		}
		b.lo, b.hi = 0, kept
	}
	copy(b.data[b.hi:], p)
	b.hi += n
}

// slice returns the retained bytes at offsets [from, to); the caller holds
// mu and has clamped both to [start, end].
func (b *Buffer) slice(from, to int64) []byte {
	return b.data[b.lo+int(from-b.start) : b.lo+int(to-b.start)]
}

// waitChan returns a channel closed at the next Append or SetErr.
func (b *Buffer) waitChan() <-chan struct{} {
	b.nmu.Lock()
	defer b.nmu.Unlock()
	if b.notify == nil {
		b.notify = make(chan struct{})
	}
	return b.notify
}

func (b *Buffer) wake() {
	b.nmu.Lock()
	ch := b.notify
	b.notify = nil
	b.nmu.Unlock()
	if ch != nil {
		close(ch)
	}
}

// End returns the offset just past the last byte ever appended: the total
// number of bytes appended. It is the cursor of "from now on".
func (b *Buffer) End() int64 {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.end
}

// Start returns the offset of the oldest retained byte. Bytes before it were
// dropped to bound memory; Start == End when nothing is retained.
func (b *Buffer) Start() int64 {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.start
}

// LastAppend returns the time given to the last Append, or the zero time if
// nothing was appended.
func (b *Buffer) LastAppend() time.Time {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.last
}

// Read returns a copy of the retained bytes from offset from, at most max
// bytes (max <= 0 means all of them). A from older than Start is moved to
// Start; a from at or beyond End returns no data. start is the offset of
// data[0] and next the offset just past the returned bytes, the cursor to
// read from next.
func (b *Buffer) Read(from int64, max int) (data []byte, start, next int64) {
	b.mu.RLock()
	defer b.mu.RUnlock()
	if from < b.start {
		from = b.start
	}
	if from >= b.end {
		return nil, from, from
	}
	to := b.end
	if max > 0 && to-from > int64(max) {
		to = from + int64(max)
	}
	return bytes.Clone(b.slice(from, to)), from, to
}

// Tail returns a copy of the last lines lines of the retained bytes, at most
// maxBytes of them (the newest are kept), for error messages. A final line
// break does not count as the start of an empty line. lines <= 0 means no
// line limit and maxBytes <= 0 no byte limit.
func (b *Buffer) Tail(lines int, maxBytes int) []byte {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return bytes.Clone(Tail(b.slice(b.start, b.end), lines, maxBytes))
}

// Tail returns the end of data: at most its last lines lines (a final
// newline does not start another) and at most maxBytes bytes; 0 means no
// bound. The result shares data's memory.
func Tail(data []byte, lines, maxBytes int) []byte {
	if maxBytes > 0 && len(data) > maxBytes {
		data = data[len(data)-maxBytes:]
	}
	if lines > 0 {
		body := bytes.TrimSuffix(data, []byte("\n"))
		cut := len(body)
		for i := 0; i < lines; i++ {
			j := bytes.LastIndexByte(body[:cut], '\n')
			if j < 0 {
				cut = -1
				break
			}
			cut = j
		}
		if cut >= 0 {
			data = data[cut+1:]
		}
	}
	return data
}

// SetErr records that the source of the stream broke (a device
// disconnected): waiting and future Wait, Expect and Capture calls return
// err at once, after any match in the bytes already appended. SetErr(nil)
// clears it (the device reconnected); offsets continue where they were.
func (b *Buffer) SetErr(err error) {
	b.mu.Lock()
	b.err = err
	b.wakeExpectersLocked(true)
	b.mu.Unlock()
	b.wake()
}

// Err returns the error set by SetErr, or nil.
func (b *Buffer) Err() error {
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.err
}

// Wait blocks until End() > from, Err() != nil or ctx is done. It returns
// nil when a byte at or after from is available, the Buffer's error, or an
// error wrapping ctx's cause.
func (b *Buffer) Wait(ctx context.Context, from int64) error {
	idled := false
	for {
		ch := b.waitChan()
		b.mu.RLock()
		end, err := b.end, b.err
		b.mu.RUnlock()
		if end > from {
			return nil
		}
		if err != nil {
			return err
		}
		if !idled {
			idled = true
			Idle(ctx)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctxError("wait for output", ctx)
		}
	}
}

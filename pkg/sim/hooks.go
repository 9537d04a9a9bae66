// Two small containers the board shares: a ring of the newest log entries
// and a set of callbacks.

package sim

import (
	"sync"
)

// ring keeps the newest max values added to it.
type ring[T any] struct {
	max   int
	buf   []T
	start int
}

func (r *ring[T]) add(v T) {
	if len(r.buf) < r.max {
		r.buf = append(r.buf, v)
		return
	}
	r.buf[r.start] = v
	r.start = (r.start + 1) % r.max
}

// snapshot returns a copy of the values, oldest first.
func (r *ring[T]) snapshot() []T {
	out := make([]T, 0, len(r.buf))
	out = append(out, r.buf[r.start:]...)
	return append(out, r.buf[:r.start]...)
}

// hooks is a set of callbacks, safe for concurrent use.
type hooks[T any] struct {
	mu   sync.Mutex
	next int
	fns  []hook[T]
}

type hook[T any] struct {
	id int
	fn func(T)
}

func (h *hooks[T]) add(fn func(T)) (remove func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.next++
	id := h.next
	h.fns = append(h.fns, hook[T]{id: id, fn: fn})
	return func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		for i, x := range h.fns {
			if x.id == id {
				// Copy so a call in progress keeps iterating its own slice.
				h.fns = append(h.fns[:i:i], h.fns[i+1:]...)
				return
			}
		}
	}
}

// call calls every registered function with v, without h.mu held so a
// callback may add or remove hooks.
func (h *hooks[T]) call(v T) {
	h.mu.Lock()
	fns := h.fns
	h.mu.Unlock()
	for _, x := range fns {
		x.fn(v)
	}
}

package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// ErrBusy is wrapped by the error a caller gets when a port or probe is held
// by another call for longer than it was willing to wait.
var ErrBusy = errors.New("busy")

// BusyError says who holds a resource.
type BusyError struct {
	Resource string
	Holder   string
	Since    time.Time
	Waited   time.Duration
}

func (e *BusyError) Error() string {
	msg := fmt.Sprintf("%s is busy: held by %s since %s (%s ago)", e.Resource, e.Holder,
		e.Since.Format("15:04:05.000"), time.Since(e.Since).Round(time.Millisecond))
	if e.Waited > 0 {
		return msg + fmt.Sprintf("; waited %s (lock_timeout_ms)", e.Waited.Round(time.Millisecond))
	}
	return msg + "; pass lock_timeout_ms to wait for it"
}

// Unwrap makes errors.Is(err, ErrBusy) true.
func (e *BusyError) Unwrap() error { return ErrBusy }

type holder struct {
	who   string
	since time.Time
	// gone is closed when the holder's call was cancelled: it is
	// finishing and releases soon, so a caller waits for it rather than
	// being told "busy" (a call right after a cancellation finds its
	// ports free).
	gone <-chan struct{}
	// session is the client session of the holder's call (sessionOf).
	session string
}

// cancelledHoldWait bounds how long a caller waits for the resources of a
// cancelled call, which runs its finally steps before it releases them.
const cancelledHoldWait = 30 * time.Second

// cancelRaceGrace is how long a call that finds a port held by another
// call of its own client session waits for that call's cancellation
// before it is told "busy". A client's notifications/cancelled may reach
// the server after its next call: over HTTP the two travel on separate
// connections, and a client that does not wait for the cancellation's 202
// (the TypeScript SDK) may have its next call arrive first; over stdio the
// Go SDK sends the cancellation from a goroutine of its own, so the next
// call can be written to the pipe before it.
const cancelRaceGrace = 3 * time.Second

// stdioSession is the session of every call served over stdio, which has
// one client.
const stdioSession = "stdio"

type sessionKey struct{}

// withHTTPSession notes the HTTP session a request belongs to, for the
// locker.
func withHTTPSession(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, sessionKey{}, id)
}

// withStdioSession notes that a request came over stdio, for the locker.
func withStdioSession(ctx context.Context) context.Context {
	return context.WithValue(ctx, sessionKey{}, stdioSession)
}

// sessionOf is the client session of the call behind ctx: an HTTP
// session, stdioSession, or "" for an in-process client.
func sessionOf(ctx context.Context) string {
	id, _ := ctx.Value(sessionKey{}).(string)
	return id
}

// locker hands out ports and probes, one caller at a time. A caller takes
// all the resources it needs at once, so two callers never deadlock.
type locker struct {
	mu      sync.Mutex
	held    map[string]holder
	changed chan struct{} // closed and replaced on every release
	waiting int           // callers waiting for a key, for tests
	// check, if set, refuses a key to the call behind ctx at once, as
	// for a port another session holds a lease of.
	check func(ctx context.Context, key string) error
}

func newLocker() *locker {
	return &locker{held: map[string]holder{}, changed: make(chan struct{})}
}

// acquire takes every key for who, waiting up to wait while one is held.
// Whatever wait says, it waits for a key held by a cancelled call (up to
// cancelledHoldWait), and for one held by a call of the same client
// session, to see whether its cancellation comes (up to cancelRaceGrace).
// The release function is idempotent.
func (l *locker) acquire(ctx context.Context, keys []string, who string, wait time.Duration) (release func(), err error) {
	keys = dedupe(keys)
	start := time.Now()
	if l.check != nil {
		for _, k := range keys {
			if err := l.check(ctx, k); err != nil {
				return nil, err
			}
		}
	}
	session := sessionOf(ctx)
	var releasingSince time.Time
	for {
		l.mu.Lock()
		var busy *BusyError
		var h holder
		for _, k := range keys {
			if hh, ok := l.held[k]; ok {
				busy = &BusyError{Resource: k, Holder: hh.who, Since: hh.since}
				h = hh
				break
			}
		}
		if busy == nil {
			now := time.Now()
			for _, k := range keys {
				l.held[k] = holder{who: who, since: now, gone: ctx.Done(), session: session}
			}
			l.mu.Unlock()
			var once sync.Once
			return func() { once.Do(func() { l.release(keys) }) }, nil
		}
		changed := l.changed
		gone := h.gone
		var until time.Time
		if wait > 0 {
			until = start.Add(wait)
		}
		select {
		case <-h.gone:
			if releasingSince.IsZero() {
				releasingSince = time.Now()
			}
			until = later(until, releasingSince.Add(cancelledHoldWait))
			gone = nil // closed: it would wake the wait at once
		default:
			if session != "" && h.session == session {
				until = later(until, start.Add(cancelRaceGrace))
			}
		}
		if !until.After(time.Now()) {
			l.mu.Unlock()
			if wait > 0 || !releasingSince.IsZero() {
				busy.Waited = time.Since(start)
			}
			return nil, busy
		}
		l.waiting++
		l.mu.Unlock()
		t := time.NewTimer(time.Until(until))
		var err error
		select {
		case <-changed:
		case <-gone:
		case <-t.C:
		case <-ctx.Done():
			err = fmt.Errorf("waiting for %s: %w", busy.Resource, ctx.Err())
		}
		t.Stop()
		l.mu.Lock()
		l.waiting--
		l.mu.Unlock()
		if err != nil {
			return nil, err
		}
	}
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// waiters returns how many callers are waiting for a key.
func (l *locker) waiters() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.waiting
}

func (l *locker) release(keys []string) {
	l.mu.Lock()
	for _, k := range keys {
		delete(l.held, k)
	}
	close(l.changed)
	l.changed = make(chan struct{})
	l.mu.Unlock()
}

// holderOf describes who holds key, or "".
func (l *locker) holderOf(key string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	h, ok := l.held[key]
	if !ok {
		return ""
	}
	return fmt.Sprintf("%s since %s", h.who, h.since.Format(time.RFC3339Nano))
}

func dedupe(keys []string) []string {
	out := append([]string(nil), keys...)
	sort.Strings(out)
	j := 0
	for i, k := range out {
		if i > 0 && k == out[j-1] {
			continue
		}
		out[j] = k
		j++
	}
	return out[:j]
}

func portKey(p string) string  { return "port " + p }
func probeKey(p string) string { return "probe " + p }

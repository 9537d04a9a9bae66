package mcpserver

import (
	"container/list"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
	"time"
)

// DefaultMaxSessions is how many streamable HTTP sessions the server
// keeps at once. Past it, an initialize request gets 503 until a session
// ends (DELETE) or idles out: live sessions are never evicted to make
// room, so a client that opens sessions in a loop cannot end everyone
// else's (and their leases).
const DefaultMaxSessions = 1000

// DefaultSessionIdle is how long a streamable HTTP session may go without
// a request before it ends, as a DELETE would end it: its requests in
// flight are cancelled and its leases (acquire_lock, console_release)
// dropped. A client that vanished without DELETE so frees what it held.
const DefaultSessionIdle = 30 * time.Minute

// sessionIDPrefix starts every session id the server hands out.
const sessionIDPrefix = "hilrun-"

// errUnknownSession is the answer for a session id the server did not hand
// out, or that was deleted or forgotten.
var errUnknownSession = errors.New("unknown session")

// sessionTable holds the streamable HTTP sessions that initialize requests
// started and neither DELETE nor idling (idle) has ended, at most max of
// them (see full). It is the transport's server.SessionIdManager: without
// it the transport accepts any well-formed id, including made-up and
// deleted ones.
type sessionTable struct {
	max int
	// idle is how long a session lives without a request.
	idle time.Duration
	// ended, if set, is told the id of every session that ends, outside
	// the table's lock.
	ended func(id string)
	// now is the clock; nil means time.Now. Tests set it.
	now func() time.Time

	mu  sync.Mutex
	ids map[string]*list.Element
	lru list.List // of *session, most recently used first
}

// session is one entry of a sessionTable. Its ctx ends when the session
// ends (DELETE, idle), which ends the session's requests still in flight
// (a GET stream, a long tool call) too.
type session struct {
	id     string
	ctx    context.Context
	cancel context.CancelFunc
	// used is when a request of the session last started or ended;
	// inflight counts its requests in flight (enter, leave), which keep
	// it from idling out.
	used     time.Time
	inflight int
}

func newSessionTable(max int) *sessionTable {
	if max <= 0 {
		max = DefaultMaxSessions
	}
	return &sessionTable{max: max, idle: DefaultSessionIdle, ids: make(map[string]*list.Element)}
}

func (t *sessionTable) clock() time.Time {
	if t.now != nil {
		return t.now()
	}
	return time.Now()
}

// Generate starts a session and returns its id: 128 random bits, so that
// an id cannot be guessed. The guard refuses initialize while the table
// is full; should concurrent initializes pass it together, the least
// recently used sessions end here to keep the bound.
func (t *sessionTable) Generate() string {
	var b [16]byte
	rand.Read(b[:]) // never returns an error (crypto/rand, Go 1.24)
	ctx, cancel := context.WithCancel(context.Background())
	now := t.clock()
	se := &session{id: sessionIDPrefix + hex.EncodeToString(b[:]), ctx: ctx, cancel: cancel, used: now}
	t.mu.Lock()
	gone := t.sweepLocked(now)
	t.ids[se.id] = t.lru.PushFront(se)
	for t.lru.Len() > t.max {
		gone = append(gone, t.removeLocked(t.lru.Back()))
	}
	t.mu.Unlock()
	t.tellEnded(gone...)
	return se.id
}

// removeLocked ends session e: its context is cancelled.
func (t *sessionTable) removeLocked(e *list.Element) string {
	se := t.lru.Remove(e).(*session)
	delete(t.ids, se.id)
	se.cancel()
	return se.id
}

// sweepLocked ends the sessions idle for t.idle or longer and returns
// their ids.
func (t *sessionTable) sweepLocked(now time.Time) []string {
	var gone []string
	for e := t.lru.Back(); e != nil; {
		se := e.Value.(*session)
		if now.Sub(se.used) < t.idle {
			break
		}
		prev := e.Prev()
		if se.inflight == 0 {
			gone = append(gone, t.removeLocked(e))
		}
		e = prev
	}
	return gone
}

// sweep ends the sessions that have idled out.
func (t *sessionTable) sweep() {
	t.mu.Lock()
	gone := t.sweepLocked(t.clock())
	t.mu.Unlock()
	t.tellEnded(gone...)
}

// full reports whether a new session would pass the bound, once the
// sessions that have idled out are ended.
func (t *sessionTable) full() bool {
	t.mu.Lock()
	gone := t.sweepLocked(t.clock())
	full := t.lru.Len() >= t.max
	t.mu.Unlock()
	t.tellEnded(gone...)
	return full
}

func (t *sessionTable) tellEnded(ids ...string) {
	if t.ended == nil {
		return
	}
	for _, id := range ids {
		t.ended(id)
	}
}

// lookup returns the context of live session id, which ends when the
// session is deleted, and marks it used; nil when id is not a live session.
func (t *sessionTable) lookup(id string) context.Context {
	now := t.clock()
	t.mu.Lock()
	gone := t.sweepLocked(now)
	e, ok := t.ids[id]
	if ok {
		t.lru.MoveToFront(e)
		e.Value.(*session).used = now
	}
	t.mu.Unlock()
	t.tellEnded(gone...)
	if !ok {
		return nil
	}
	return e.Value.(*session).ctx
}

// enter is lookup for a request of session id that the guard lets
// through: until leave, the session does not idle out.
func (t *sessionTable) enter(id string) context.Context {
	ctx := t.lookup(id)
	if ctx != nil {
		t.mu.Lock()
		if e, ok := t.ids[id]; ok {
			e.Value.(*session).inflight++
		}
		t.mu.Unlock()
	}
	return ctx
}

// leave ends a request that enter let in; the session's idle time starts
// again.
func (t *sessionTable) leave(id string) {
	now := t.clock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.ids[id]; ok {
		se := e.Value.(*session)
		se.inflight--
		se.used = now
		t.lru.MoveToFront(e)
	}
}

// known reports whether id is a live session, and marks it used.
func (t *sessionTable) known(id string) bool { return t.lookup(id) != nil }

// Validate refuses ids that are not live sessions.
func (t *sessionTable) Validate(id string) (isTerminated bool, err error) {
	if !t.known(id) {
		return false, errUnknownSession
	}
	return false, nil
}

// Terminate ends session id and its requests in flight; later requests
// with it get 404.
func (t *sessionTable) Terminate(id string) (isNotAllowed bool, err error) {
	t.mu.Lock()
	e, ok := t.ids[id]
	if ok {
		t.removeLocked(e)
	}
	t.mu.Unlock()
	if ok {
		t.tellEnded(id)
	}
	return false, nil
}

// len is the number of live sessions.
func (t *sessionTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.ids)
}

package mcpserver

import (
	"container/list"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"sync"
)

// DefaultMaxSessions is how many streamable HTTP sessions the server
// remembers. Past it, starting a session forgets the one used least
// recently; its client gets 404 and, as the MCP specification says,
// starts a new session.
const DefaultMaxSessions = 1000

// sessionIDPrefix starts every session id the server hands out.
const sessionIDPrefix = "hilrun-"

// errUnknownSession is the answer for a session id the server did not hand
// out, or that was deleted or forgotten.
var errUnknownSession = errors.New("unknown session")

// sessionTable holds the streamable HTTP sessions that initialize requests
// started and DELETE has not ended, at most max of them. It is the
// transport's server.SessionIdManager: without it the transport accepts
// any well-formed id, including made-up and deleted ones.
type sessionTable struct {
	max int
	// ended, if set, is told the id of every session that ends or is
	// forgotten, outside the table's lock.
	ended func(id string)

	mu  sync.Mutex
	ids map[string]*list.Element
	lru list.List // of *session, most recently used first
}

// session is one entry of a sessionTable. Its ctx ends when the client
// deletes the session, which ends the session's requests still in flight
// (a GET stream, a long tool call) too.
type session struct {
	id     string
	ctx    context.Context
	cancel context.CancelFunc
}

func newSessionTable(max int) *sessionTable {
	if max <= 0 {
		max = DefaultMaxSessions
	}
	return &sessionTable{max: max, ids: make(map[string]*list.Element)}
}

// Generate starts a session and returns its id: 128 random bits, so that
// an id cannot be guessed.
func (t *sessionTable) Generate() string {
	var b [16]byte
	rand.Read(b[:]) // never returns an error (crypto/rand, Go 1.24)
	ctx, cancel := context.WithCancel(context.Background())
	se := &session{id: sessionIDPrefix + hex.EncodeToString(b[:]), ctx: ctx, cancel: cancel}
	var forgotten []string
	t.mu.Lock()
	t.ids[se.id] = t.lru.PushFront(se)
	for t.lru.Len() > t.max {
		// Forgotten, not ended: a request of it still in flight goes on,
		// the next one gets 404.
		old := t.lru.Remove(t.lru.Back()).(*session)
		delete(t.ids, old.id)
		forgotten = append(forgotten, old.id)
	}
	t.mu.Unlock()
	t.tellEnded(forgotten...)
	return se.id
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
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.ids[id]
	if !ok {
		return nil
	}
	t.lru.MoveToFront(e)
	return e.Value.(*session).ctx
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
		se := t.lru.Remove(e).(*session)
		delete(t.ids, id)
		se.cancel()
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

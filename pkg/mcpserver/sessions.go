package mcpserver

import (
	"container/list"
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

	mu  sync.Mutex
	ids map[string]*list.Element
	lru list.List // of string, most recently used first
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
	id := sessionIDPrefix + hex.EncodeToString(b[:])
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ids[id] = t.lru.PushFront(id)
	for t.lru.Len() > t.max {
		delete(t.ids, t.lru.Remove(t.lru.Back()).(string))
	}
	return id
}

// known reports whether id is a live session, and marks it used.
func (t *sessionTable) known(id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.ids[id]
	if ok {
		t.lru.MoveToFront(e)
	}
	return ok
}

// Validate refuses ids that are not live sessions.
func (t *sessionTable) Validate(id string) (isTerminated bool, err error) {
	if !t.known(id) {
		return false, errUnknownSession
	}
	return false, nil
}

// Terminate ends session id; later requests with it get 404.
func (t *sessionTable) Terminate(id string) (isNotAllowed bool, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if e, ok := t.ids[id]; ok {
		t.lru.Remove(e)
		delete(t.ids, id)
	}
	return false, nil
}

// len is the number of live sessions.
func (t *sessionTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.ids)
}

package mcpserver

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// DefaultMinBodyRate is the slowest, in bytes a second, that an HTTP
// request body may arrive once defaultBodyGrace has passed since it began,
// unless WithMinBodyRate says otherwise: 1 KiB/s. A client that declares a
// large body and sends nothing, or a byte now and then, is cut off rather
// than holding a request (and the server's attention) for long.
const DefaultMinBodyRate = 1 << 10

// defaultBodyGrace is how long a request body may take before its rate is
// checked: short bodies, and slow starts, need no rate.
const defaultBodyGrace = 10 * time.Second

// WithMinBodyRate sets the slowest a request body may arrive, in bytes a
// second, once its first 10 seconds have passed (default
// DefaultMinBodyRate); 0 turns the check off.
func WithMinBodyRate(n int64) HTTPOption {
	return func(g *guard) error {
		if n < 0 {
			return fmt.Errorf("--min-body-rate %d: want a number of bytes a second, 0 or above", n)
		}
		if n == 0 {
			n = -1
		}
		g.bodyRate = n
		return nil
	}
}

// errHeldFull ends the read of a body when the bytes that requests in
// flight hold would pass maxHeld.
var errHeldFull = errors.New("the requests in flight hold too many bytes of request bodies")

// admitBody reads r's body within the limits: the body limit, the bytes
// that requests in flight may hold together, the slowest rate a body may
// arrive at and MaxJSONItems. Bytes are charged as they arrive, never on
// the length a client declares, so clients that declare large bodies and
// send nothing hold nothing. It returns the body and a func that gives its
// bytes back when the request ends, or answers the client and returns a
// nil func.
func (g *guard) admitBody(w http.ResponseWriter, r *http.Request) ([]byte, func()) {
	if r.ContentLength > g.maxBody {
		g.tooLarge(w, r.ContentLength)
		return nil, nil
	}
	body, ok := g.readBody(w, r)
	if ok {
		if _, over := countJSONItems(body, MaxJSONItems); over {
			http.Error(w, fmt.Sprintf("413 request body too large: this hilrun MCP server accepts at most %d JSON items (objects, arrays and commas) in a request, got more", MaxJSONItems), http.StatusRequestEntityTooLarge)
			ok = false
		}
	}
	if !ok {
		if body != nil {
			g.hold(-int64(len(body)))
		}
		return nil, nil
	}
	return body, func() { g.hold(-int64(len(body))) }
}

// hold adds n bytes (negative: gives them back) to the request bodies
// that requests in flight hold, and reports whether that stays within
// maxHeld; when it would not, nothing is added.
func (g *guard) hold(n int64) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if n > 0 && g.held+n > g.maxHeld() {
		return false
	}
	g.held += n
	return true
}

func (g *guard) heldBytes() int64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held
}

// maxHeld is the most bytes of request bodies that requests in flight may
// hold together.
func (g *guard) maxHeld() int64 { return heldBodiesFactor * g.maxBody }

// minRate is the slowest a body may arrive, in bytes a second, and the
// time before it is checked; a rate of 0 means no limit.
func (g *guard) minRate() (int64, time.Duration) {
	rate, grace := g.bodyRate, g.bodyGrace
	switch {
	case rate == 0:
		rate = DefaultMinBodyRate
	case rate < 0:
		rate = 0
	}
	if grace <= 0 {
		grace = defaultBodyGrace
	}
	return rate, grace
}

// chargedBody reads a request body, charging the guard for each byte as
// it arrives and moving the connection's read deadline so that the body
// keeps up the guard's minimum rate.
type chargedBody struct {
	g        *guard
	r        io.Reader
	rc       *http.ResponseController
	start    time.Time
	rate     int64
	grace    time.Duration
	n        int64
	full     bool
	deadline time.Time
}

// Read reads from the body and charges what arrived.
func (c *chargedBody) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		if !c.g.hold(int64(n)) {
			c.full = true
			return 0, errHeldFull
		}
		c.n += int64(n)
		c.setDeadline()
	}
	return n, err
}

// setDeadline sets the read deadline to when the body falls below the
// minimum rate (never before the grace has passed), or the body timeout,
// whichever is first.
func (c *chargedBody) setDeadline() {
	d := c.start.Add(c.g.bodyTimeout)
	if c.rate > 0 {
		due := max(c.grace, time.Duration(float64(c.n+1)/float64(c.rate)*float64(time.Second)))
		if at := c.start.Add(due); at.Before(d) {
			d = at
		}
	}
	c.deadline = d
	c.rc.SetReadDeadline(d)
}

// readBody reads r's body, at most maxBody bytes of it, charging the
// guard as bytes arrive (the caller gives them back). Past the limit it
// answers 413, past what the requests in flight may hold 503, and for a
// body that stops or slows below the minimum rate 408; then it gives back
// what it charged and returns false.
func (g *guard) readBody(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	rate, grace := g.minRate()
	c := &chargedBody{g: g, r: http.MaxBytesReader(w, r.Body, g.maxBody), rc: http.NewResponseController(w),
		start: time.Now(), rate: rate, grace: grace}
	// A client that stops sending mid-body must not hold the request.
	// net/http lifts the deadline once the body has been read, so that
	// long tool calls are not cut; lifting it here too keeps that true.
	c.setDeadline()
	var buf bytes.Buffer
	// Grow on what arrives, not on what a client declares.
	if r.ContentLength > 0 {
		buf.Grow(int(min(r.ContentLength, 64<<10)))
	}
	_, err := buf.ReadFrom(c)
	if err == nil {
		c.rc.SetReadDeadline(time.Time{})
		return buf.Bytes(), true
	}
	// The connection closes after the answer: net/http would otherwise
	// wait for the rest of the body, with no deadline, before it does.
	c.rc.SetReadDeadline(time.Now())
	g.hold(-c.n)
	var tooBig *http.MaxBytesError
	timedOut := errors.Is(err, os.ErrDeadlineExceeded)
	switch {
	case c.full:
		w.Header().Set("Connection", "close")
		w.Header().Set("Retry-After", "10")
		http.Error(w, fmt.Sprintf("503 busy: the requests in flight already hold %d bytes of request bodies, at most %d (%d times --max-body); try again when some calls have ended", g.heldBytes(), g.maxHeld(), heldBodiesFactor), http.StatusServiceUnavailable)
	case errors.As(err, &tooBig):
		g.tooLarge(w, -1)
	case timedOut && c.deadline.Before(c.start.Add(g.bodyTimeout)):
		w.Header().Set("Connection", "close")
		http.Error(w, fmt.Sprintf("408 request timeout: the request body arrived slower than %d bytes a second after its first %s (--min-body-rate): %d bytes in %s", rate, grace, c.n, time.Since(c.start).Round(time.Millisecond)), http.StatusRequestTimeout)
	case timedOut:
		w.Header().Set("Connection", "close")
		http.Error(w, fmt.Sprintf("408 request timeout: the request body did not arrive within %s", g.bodyTimeout), http.StatusRequestTimeout)
	default:
		http.Error(w, fmt.Sprintf("400 bad request: read the request body: %v", err), http.StatusBadRequest)
	}
	return nil, false
}

// tooLarge answers 413 for a body of size bytes (-1: unknown) and closes
// the connection rather than reading the rest.
func (g *guard) tooLarge(w http.ResponseWriter, size int64) {
	w.Header().Set("Connection", "close")
	got := "a larger one"
	if size >= 0 {
		got = fmt.Sprintf("%d bytes", size)
	}
	http.Error(w, fmt.Sprintf("413 request body too large: this hilrun MCP server accepts at most %d bytes (--max-body), got %s", g.maxBody, got), http.StatusRequestEntityTooLarge)
}

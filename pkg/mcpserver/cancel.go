package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"io"

	"github.com/mark3labs/mcp-go/mcp"
)

// inflightCall is a tool call in flight, in Server.calls.
type inflightCall struct {
	key string
	// done is closed when the call has ended and released its ports and
	// probes.
	done chan struct{}
	// cancel ends the call's context.
	cancel context.CancelFunc
	// byClient says the client cancelled the call (cancelArrived), so it
	// gets no response. Guarded by Server.mu.
	byClient bool
}

// maxEarlyCancels bounds how many cancellations of calls that are not in
// flight the server remembers. Most are of calls that have already ended
// (the client cancelled as the result came); the one that matters, a call
// not started yet, finds its cancellation among the newest.
const maxEarlyCancels = 256

// earlyCancels are the keys (callKey) of calls the client cancelled while
// they were not in flight, oldest first. Guarded by Server.mu.
type earlyCancels struct {
	keys  map[string]bool
	order []string
}

func (e *earlyCancels) add(key string) {
	if e.keys == nil {
		e.keys = map[string]bool{}
	}
	if e.keys[key] {
		return
	}
	if len(e.order) == maxEarlyCancels {
		delete(e.keys, e.order[0])
		e.order = append(e.order[:0], e.order[1:]...)
	}
	e.keys[key] = true
	e.order = append(e.order, key)
}

// take reports whether key was cancelled, and forgets it.
func (e *earlyCancels) take(key string) bool {
	if !e.keys[key] {
		return false
	}
	delete(e.keys, key)
	for i, k := range e.order {
		if k == key {
			e.order = append(e.order[:i], e.order[i+1:]...)
			break
		}
	}
	return true
}

// cancelKey names the call with JSON-RPC id in a client session.
func cancelKey(session string, id any) string { return session + "\x00" + idKey(id) }

// cancelArrived ends the tool call with JSON-RPC id in session, for the
// client's notifications/cancelled, and returns a channel closed once the
// call has ended and released its ports and probes; nil when no such call
// is in flight. A cancellation that comes before its call has started
// (mcp-go forgets those: stdio hands tool calls to workers, and over HTTP
// the call and its cancellation travel on separate connections) is kept,
// and ends the call as it starts.
func (s *Server) cancelArrived(session string, id any) <-chan struct{} {
	key := cancelKey(session, id)
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.calls[key]; c != nil {
		c.byClient = true
		c.cancel()
		return c.done
	}
	s.early.add(key)
	return nil
}

// calling notes the call behind ctx and req in flight, with cancel ending
// it, until called; nil for a call without an id.
func (s *Server) calling(ctx context.Context, req mcp.CallToolRequest, cancel context.CancelFunc) *inflightCall {
	key := callKey(ctx, req)
	if key == "" {
		return nil
	}
	c := &inflightCall{key: key, done: make(chan struct{}), cancel: cancel}
	s.mu.Lock()
	s.calls[key] = c
	if s.early.take(key) {
		c.byClient = true
		cancel()
	}
	s.mu.Unlock()
	return c
}

// called notes that call has ended.
func (s *Server) called(c *inflightCall) {
	if c == nil {
		return
	}
	s.mu.Lock()
	if s.calls[c.key] == c {
		delete(s.calls, c.key)
	}
	s.mu.Unlock()
	close(c.done)
}

// cancelledByClient reports whether the client cancelled call.
func (s *Server) cancelledByClient(c *inflightCall) bool {
	if c == nil {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return c.byClient
}

// maxWatchedLine is the longest standard input line cancelWatch looks
// into; a notifications/cancelled is far shorter.
const maxWatchedLine = 64 << 10

// cancelWatch passes standard input through to mcp-go, and hands cancelled
// the request id of every notifications/cancelled line as the line is
// read, before mcp-go gets to it: mcp-go drops a cancellation of a call
// its workers have not started yet.
type cancelWatch struct {
	r         io.Reader
	cancelled func(id any)
	line      []byte
	long      bool // the current line is past maxWatchedLine
}

func (w *cancelWatch) Read(p []byte) (int, error) {
	n, err := w.r.Read(p)
	w.scan(p[:n])
	return n, err
}

func (w *cancelWatch) scan(b []byte) {
	for len(b) > 0 {
		part, rest, ended := bytes.Cut(b, []byte{'\n'})
		switch {
		case w.long:
		case len(w.line)+len(part) > maxWatchedLine:
			w.long, w.line = true, w.line[:0]
		default:
			w.line = append(w.line, part...)
		}
		if !ended {
			return
		}
		if !w.long {
			w.check(w.line)
		}
		w.line, w.long = w.line[:0], false
		b = rest
	}
}

func (w *cancelWatch) check(line []byte) {
	if !bytes.Contains(line, []byte(mcp.MethodNotificationCancelled)) {
		return
	}
	var m struct {
		Method string `json:"method"`
		ID     any    `json:"id"`
		Params struct {
			RequestID any `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil || m.Method != string(mcp.MethodNotificationCancelled) || m.ID != nil || m.Params.RequestID == nil {
		return
	}
	w.cancelled(m.Params.RequestID)
}

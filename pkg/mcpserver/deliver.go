package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// An outbox writes what a tool call sends besides its result straight to
// the stream that carries the result, in order with it. mcp-go queues
// notifications on a session channel that another goroutine drains: under
// stdio that goroutine raced the result, so the last progress sometimes
// came after it; over HTTP a session's GET stream and any of its POSTs
// took from the same channel, so progress could go down another
// connection, after the result, or be dropped.
type outbox interface {
	// notify writes n; when it returns, n is on the stream (or the stream
	// is gone).
	notify(n mcp.JSONRPCNotification) error
	// drop keeps the response to request id from being written: the
	// client cancelled the call, and the MCP specification says a
	// cancelled request SHOULD NOT be answered.
	drop(id any)
}

type outboxKey struct{}

func withOutbox(ctx context.Context, o outbox) context.Context {
	return context.WithValue(ctx, outboxKey{}, o)
}

// outboxOf returns the outbox of the stream serving ctx, or nil (an
// in-process client): then notifications take mcp-go's way.
func outboxOf(ctx context.Context) outbox {
	o, _ := ctx.Value(outboxKey{}).(outbox)
	return o
}

// idKey is a JSON-RPC request id as it appears on the wire, to compare
// ids whatever Go type decoding gave them.
func idKey(id any) string {
	b, err := json.Marshal(id)
	if err != nil {
		return fmt.Sprint(id)
	}
	return string(b)
}

// stdioOut is standard output under stdio: mcp-go writes each message with
// one Write call, and so does notify, so lines never interleave.
type stdioOut struct {
	mu sync.Mutex
	w  io.Writer
	// dropped are the ids (idKey) of cancelled calls whose response is
	// not written; an entry goes when its response comes by.
	dropped map[string]bool
}

func newStdioOut(w io.Writer) *stdioOut { return &stdioOut{w: w, dropped: map[string]bool{}} }

func (o *stdioOut) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if len(o.dropped) > 0 {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(p, &m) == nil && m.Method == "" && len(m.ID) > 0 {
			var id any
			if json.Unmarshal(m.ID, &id) == nil && o.dropped[idKey(id)] {
				delete(o.dropped, idKey(id))
				return len(p), nil
			}
		}
	}
	return o.w.Write(p)
}

func (o *stdioOut) notify(n mcp.JSONRPCNotification) error {
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	_, err = o.w.Write(append(b, '\n'))
	return err
}

func (o *stdioOut) drop(id any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.dropped[idKey(id)] = true
}

// httpOut is the response of one POST: notify turns it into an event
// stream (text/event-stream) and writes each notification as an event,
// ahead of the result, which mcp-go writes when the handler has
// returned. A result that mcp-go writes as plain JSON into a stream that
// notify started is framed as an event too.
type httpOut struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	started bool // the status line is written
	stream  bool // notify made the response an event stream
	dropped bool
}

func (o *httpOut) Header() http.Header { return o.w.Header() }

func (o *httpOut) WriteHeader(code int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.started {
		return
	}
	if o.dropped && code == http.StatusOK {
		// A stream that ends without the response: what the
		// specification asks for a cancelled request.
		o.w.Header().Set("Content-Type", "text/event-stream")
	}
	o.started = true
	// mcp-go makes the response an event stream itself when it has
	// notifications of its own to send.
	o.stream = o.w.Header().Get("Content-Type") == "text/event-stream"
	o.w.WriteHeader(code)
}

func (o *httpOut) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dropped {
		return len(p), nil
	}
	o.started = true
	if o.stream {
		if t := bytes.TrimSpace(p); len(t) > 0 && (t[0] == '{' || t[0] == '[') {
			if _, err := fmt.Fprintf(o.w, "event: message\ndata: %s\n\n", t); err != nil {
				return 0, err
			}
			return len(p), nil
		}
	}
	return o.w.Write(p)
}

// Flush sends what was written; mcp-go streams only through a Flusher.
func (o *httpOut) Flush() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.flush()
}

func (o *httpOut) flush() {
	if f, ok := o.w.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (o *httpOut) Unwrap() http.ResponseWriter { return o.w }

func (o *httpOut) notify(n mcp.JSONRPCNotification) error {
	b, err := json.Marshal(n)
	if err != nil {
		return err
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.dropped {
		return nil
	}
	if !o.started {
		h := o.w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("Cache-Control", "no-cache")
		o.w.WriteHeader(http.StatusOK)
		o.started, o.stream = true, true
	}
	if !o.stream {
		// mcp-go answers with plain JSON, already begun: progress has
		// no place in it any more.
		return nil
	}
	if _, err := fmt.Fprintf(o.w, "event: message\ndata: %s\n\n", b); err != nil {
		return err
	}
	o.flush()
	return nil
}

func (o *httpOut) drop(any) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.dropped = true
}

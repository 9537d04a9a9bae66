package mcpserver

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/hilrun/hilrun/pkg/stream"
)

type readArgs struct {
	Connection       string `json:"connection"`
	ConnectionID     string `json:"connection_id"`
	Cursor           *int64 `json:"cursor"`
	MaxBytes         int    `json:"max_bytes"`
	Encoding         string `json:"encoding"`
	TimeoutMS        int64  `json:"timeout_ms"`
	DurationMS       int64  `json:"duration_ms"`
	StartTrigger     string `json:"start_trigger"`
	InitialTimeoutMS int64  `json:"initial_timeout_ms"`
	IdleTimeoutMS    int64  `json:"idle_timeout_ms"`
	LockTimeoutMS    *int64 `json:"lock_timeout_ms"`
}

type readResult struct {
	ConnectionID string `json:"connection_id"`
	Data         string `json:"data"`
	Encoding     string `json:"encoding"`
	Start        int64  `json:"start"`
	Cursor       int64  `json:"cursor"`
	Bytes        int    `json:"bytes"`
	Reason       string `json:"reason"`
}

// defaultMaxRead bounds a serial_read that does not say.
const defaultMaxRead = 64 << 10

// burstIdle ends a timeout_ms read once the device pauses.
const burstIdle = 20 * time.Millisecond

// maxReadWindow bounds a serial_read's capture window and first-byte wait.
const maxReadWindow = time.Hour

func (s *Server) serialRead(ctx context.Context, req mcp.CallToolRequest, a *readArgs) (any, string, error) {
	c, err := s.connection(first(a.Connection, a.ConnectionID))
	if err != nil {
		return nil, "", err
	}
	enc := cmp.Or(strings.ToLower(a.Encoding), "utf8")
	if _, err := encodeBytes(nil, enc); err != nil {
		return nil, "", err
	}
	max := a.MaxBytes
	if max <= 0 {
		max = defaultMaxRead
	}
	switch strings.ToLower(a.StartTrigger) {
	case "", "first_byte", "immediate":
	default:
		return nil, "", fmt.Errorf("start_trigger %q: want immediate or first_byte", a.StartTrigger)
	}
	release, err := s.locks.acquire(ctx, []string{portKey(realPort(c.port))}, who(ctx, req), lockWait(a.LockTimeoutMS))
	if err != nil {
		return nil, "", err
	}
	defer release()
	var r readSpan
	switch {
	case a.DurationMS > 0 || a.IdleTimeoutMS > 0 || a.InitialTimeoutMS > 0:
		r, err = readWindow(ctx, c, a, max)
	case a.TimeoutMS > 0:
		r, err = readBurst(ctx, c, a, max)
	default:
		r = readAvailable(c, a.Cursor, max)
	}
	if err != nil {
		return nil, "", err
	}
	c.mu.Lock()
	if r.next > c.readCursor || a.Cursor != nil {
		c.readCursor = r.next
	}
	c.mu.Unlock()
	text, _ := encodeBytes(r.data, enc)
	out := readResult{ConnectionID: c.id, Data: text, Encoding: enc, Start: r.start, Cursor: r.next, Bytes: len(r.data), Reason: r.reason}
	return out, fmt.Sprintf("%d bytes from %s [%d, %d) (%s): %s", len(r.data), c.id, r.start, r.next, r.reason, printable(r.data)), nil
}

// readSpan is what a serial_read returns: data from start, the cursor
// next to read from, and why the read ended.
type readSpan struct {
	data        []byte
	start, next int64
	reason      string
}

// readWindow collects a capture window, from the cursor given, else from
// where the last read ended, so that what arrived between the two reads (a
// reply to a serial_write just before) is in it: a reader's cursor never
// passes bytes it was not given.
func readWindow(ctx context.Context, c *connection, a *readArgs, maxBytes int) (readSpan, error) {
	from := c.readFrom(a.Cursor)
	opt := stream.CaptureOptions{StartOnFirstByte: strings.ToLower(a.StartTrigger) != "immediate", MaxBytes: maxBytes}
	for _, w := range []struct {
		name string
		ms   int64
		d    *time.Duration
	}{{"duration_ms", a.DurationMS, &opt.Duration}, {"idle_timeout_ms", a.IdleTimeoutMS, &opt.IdleTimeout}, {"initial_timeout_ms", a.InitialTimeoutMS, &opt.InitialTimeout}} {
		var err error
		if *w.d, err = msArg(w.name, w.ms, maxReadWindow); err != nil {
			return readSpan{}, err
		}
	}
	if opt.Duration == 0 && opt.IdleTimeout == 0 {
		opt.Duration = opt.InitialTimeout
	}
	if opt.StartOnFirstByte && opt.InitialTimeout == 0 {
		// A window that waits for its first byte on a silent device
		// would never end: it waits as long as the window lasts.
		opt.InitialTimeout = max(opt.Duration, opt.IdleTimeout)
	}
	capt, err := c.console.Capture(ctx, from, opt)
	if err != nil && len(capt.Data) == 0 && ctx.Err() == nil {
		return readSpan{}, fmt.Errorf("capture on %s: %w", c.port, err)
	}
	r := readSpan{capt.Data, capt.Start, capt.End, capt.Reason}
	if err != nil {
		r.reason = "interrupted"
	}
	return r, nil
}

// readBurst waits up to timeout_ms for a first byte, then returns the
// burst it begins.
func readBurst(ctx context.Context, c *connection, a *readArgs, maxBytes int) (readSpan, error) {
	from := c.readFrom(a.Cursor)
	first, err := msArg("timeout_ms", a.TimeoutMS, maxReadWindow)
	if err != nil {
		return readSpan{}, err
	}
	capt, err := c.console.Capture(ctx, from, stream.CaptureOptions{
		InitialTimeout: first,
		IdleTimeout:    burstIdle, StartOnFirstByte: true, MaxBytes: maxBytes,
	})
	if err != nil && ctx.Err() == nil && len(capt.Data) == 0 {
		return readSpan{}, fmt.Errorf("read from %s: %w", c.port, err)
	}
	r := readSpan{capt.Data, capt.Start, max(capt.End, from), capt.Reason}
	if r.reason == stream.ReasonNoData {
		r.reason = "timeout"
	} else if r.reason == "" || r.reason == stream.ReasonIdle {
		r.reason = "data"
	}
	return r, nil
}

// readAvailable returns at once what is buffered from cursor on (where
// the last read ended when cursor is nil).
func readAvailable(c *connection, cursor *int64, maxBytes int) readSpan {
	data, start, next := c.console.Read(c.readFrom(cursor), maxBytes)
	r := readSpan{data, start, next, "available"}
	if len(data) == maxBytes {
		r.reason = stream.ReasonMaxBytes
	}
	return r
}

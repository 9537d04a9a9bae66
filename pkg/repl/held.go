package repl

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/stream"
)

// heldConsole is an open console lent to one run: closing it does nothing,
// and its cursor is the session's, so a step starts where the previous
// line left off, as the next step of a file would.
type heldConsole struct {
	runner.Console
	s    *Session
	name string
}

func (h *heldConsole) Close() error { return nil }

// Unwrap is the session's console, for the runner's modem line steps.
func (h *heldConsole) Unwrap() runner.Console { return h.Console }

func (h *heldConsole) Cursor() int64 {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	return h.s.cursor[h.name]
}

// LastSend is where the reply to the session's last send on this device
// began, so the runner waits for the prompt after it.
func (h *heldConsole) LastSend() (runner.SendMark, bool) {
	h.s.mu.Lock()
	defer h.s.mu.Unlock()
	m, ok := h.s.sent[h.name]
	return m, ok
}

// SetLastSend keeps m for the next line's send.
func (h *heldConsole) SetLastSend(m runner.SendMark) {
	h.s.mu.Lock()
	h.s.sent[h.name] = m
	h.s.mu.Unlock()
}

func (h *heldConsole) setCursor(c int64) {
	h.s.mu.Lock()
	h.s.cursor[h.name] = c
	h.s.mu.Unlock()
}

func (h *heldConsole) Write(ctx context.Context, p []byte) (int64, error) {
	c, err := h.Console.Write(ctx, p)
	if err == nil {
		h.setCursor(c)
	}
	return c, err
}

func (h *heldConsole) Expect(ctx context.Context, from int64, want, failOn []stream.Pattern) (stream.Match, error) {
	m, err := h.Console.Expect(ctx, from, want, failOn)
	if err == nil {
		h.setCursor(m.End)
	}
	return m, err
}

func (h *heldConsole) Capture(ctx context.Context, from int64, opt stream.CaptureOptions) (stream.Capture, error) {
	c, err := h.Console.Capture(ctx, from, opt)
	if c.End > 0 {
		h.setCursor(c.End)
	}
	return c, err
}

// handover is a console that can let go of its port for an upload.
type handover interface {
	Release(ctx context.Context) error
	Reacquire(ctx context.Context) error
}

// Release lends the console's port to an upload step's tool.
func (h *heldConsole) Release(ctx context.Context) error {
	hc, ok := h.Console.(handover)
	if !ok {
		return fmt.Errorf("console %s cannot hand its port over", h.name)
	}
	return hc.Release(ctx)
}

// Reacquire takes the port back after an upload; the next line starts with
// what the device prints from then on.
func (h *heldConsole) Reacquire(ctx context.Context) error {
	hc, ok := h.Console.(handover)
	if !ok {
		return fmt.Errorf("console %s cannot hand its port over", h.name)
	}
	h.setCursor(h.Console.Cursor())
	return hc.Reacquire(ctx)
}

// heldProbe is an open probe session lent to one run.
type heldProbe struct{ runner.Debugger }

func (heldProbe) Close() error { return nil }

// Unwrap is the session, whose optional abilities (loading and programming
// images) the runner finds through it.
func (h heldProbe) Unwrap() runner.Debugger { return h.Debugger }

// sessionPath renumbers the path of a line's step ("0", "0.2") as the
// session's step it is, numbered from 1 as :steps lists them, when done
// steps ran before it.
func sessionPath(path string, done int) string {
	top, rest, nested := strings.Cut(path, ".")
	n, err := strconv.Atoi(top)
	if err != nil {
		return path
	}
	top = strconv.Itoa(done + n + 1)
	if nested {
		return top + "." + rest
	}
	return top
}

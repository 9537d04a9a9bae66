// Secrets on a console: what arrives passes a redact.Stream before the
// buffer, the log and the receivers see it, so no reader of the console
// (an expect, a capture, an MCP client's serial_read, a report) ever holds
// a secret's value, and every offset stays true.

package serialx

import (
	"sync"
	"time"

	"github.com/hilrun/hilrun/pkg/redact"
	"github.com/hilrun/hilrun/pkg/stream"
)

// masker holds the console's redact.Stream and the timer that lets out
// what it holds back once the device is quiet.
type masker struct {
	mu    sync.Mutex
	st    *redact.Stream
	after time.Duration
	timer *time.Timer
	// at is when the held bytes arrived.
	at time.Time
	// closed is set once the console closed: a late timer lets out
	// nothing.
	closed bool
}

func newMasker(cfg Config) *masker {
	st := cfg.Secrets.NewStream()
	if st == nil {
		return nil
	}
	after := cfg.SecretFlush
	if after <= 0 {
		after = stream.DefaultSettle
	}
	return &masker{st: st, after: after}
}

// receive hands a chunk from the port to deliver, secrets masked.
func (c *Console) receive(at time.Time, p []byte) {
	m := c.mask
	if m == nil {
		c.deliver(at, p)
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.st.Held() == 0 {
		m.at = at
	}
	if out := m.st.Write(p); len(out) > 0 {
		c.deliver(m.at, out)
		m.at = at
	}
	if m.st.Held() == 0 {
		if m.timer != nil {
			m.timer.Stop()
		}
		return
	}
	if m.timer == nil {
		m.timer = time.AfterFunc(m.after, func() { c.flushHeld(false) })
		return
	}
	m.timer.Reset(m.after)
}

// flushHeld lets out what the masker holds back; closing says the
// console is closing, after which nothing more is let out.
func (c *Console) flushHeld(closing bool) {
	m := c.mask
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return
	}
	if out := m.st.Flush(); len(out) > 0 {
		c.deliver(m.at, out)
	}
	if closing {
		m.closed = true
		if m.timer != nil {
			m.timer.Stop()
		}
	}
}

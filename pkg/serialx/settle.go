package serialx

import (
	"fmt"
	"time"
)

// settleLimit bounds how long Close waits for output that flow control
// holds back before it discards it.
const settleLimit = 2 * time.Second

// DiscardError is what Close returns when it discarded output that the
// device did not take in time: N bytes written were never sent.
type DiscardError struct {
	Path string
	N    int
}

func (e *DiscardError) Error() string {
	return fmt.Sprintf("close %s: %d bytes written were never sent: the device did not take them within the time they need at the port's rate (flow control held them: XOFF, CTS low, or a USB device that stopped reading), so they were discarded", e.Path, e.N)
}

// Discarded is how many bytes were discarded.
func (e *DiscardError) Discarded() int { return e.N }

// settleOutput lets what the console wrote leave before Close closes the
// port, and discards only what cannot: a write still waiting for room, or
// output still queued after the time its bytes take at the port's rate,
// plus a margin, at most settleLimit (flow control, or a USB device that
// stopped reading, holds it; closing the port would wait for it). Output
// that leaves is never flushed: that would drop the end of the last send
// (a pty's queue reads empty, and a flush loses what its other side has
// not read yet). It returns a *DiscardError, or nil.
func (c *Console) settleOutput() error {
	if len(c.wsem) > 0 {
		// A write under way: it waits for room flow control does not
		// give, or Close interrupts it; it says what it did not send.
		c.discardHeldOutput()
		return nil
	}
	c.mu.RLock()
	port := c.port
	c.mu.RUnlock()
	if port == nil {
		return nil
	}
	baud := c.cfg.Baud
	if baud <= 0 {
		baud = 115200
	}
	var deadline time.Time
	for {
		c.mu.RLock()
		same := c.port == port
		c.mu.RUnlock()
		if !same {
			return nil // released or reconnected meanwhile: not this port's
		}
		n, ok := outputQueued(port)
		if !ok || n == 0 {
			return nil
		}
		if deadline.IsZero() {
			// Ten bits a byte, twice over, and the margin.
			deadline = time.Now().Add(min(settleLimit, 100*time.Millisecond+time.Duration(n)*20*time.Second/time.Duration(baud)))
		}
		if time.Now().After(deadline) {
			c.discardHeldOutput()
			return &DiscardError{Path: c.Path(), N: n}
		}
		time.Sleep(time.Millisecond)
	}
}

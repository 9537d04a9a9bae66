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

// takeWriteTurn takes the console's write turn for Close, and keeps it,
// so that no write or modem control starts while the output settles and
// the port closes (one that took the port then would hold mu, which Close
// waits for, while flow control held it). A write under way goes on while
// the driver takes its chunks, for up to settleLimit; one that stops
// moving for a chunk's sending time, or is still writing then, is ended
// and says what it did not send. It returns how many bytes that discarded
// from the driver's output queue.
func (c *Console) takeWriteTurn() (discarded int) {
	wait := c.sendTime(writeChunk)
	limit := time.Now().Add(settleLimit)
	t := time.NewTimer(wait)
	defer t.Stop()
	moved := c.tx.Load()
	for {
		select {
		case c.wsem <- struct{}{}:
			return discarded
		case <-t.C:
		}
		if n := c.tx.Load(); n != moved && time.Now().Before(limit) {
			moved = n // it moves: another chunk's time
		} else {
			discarded += c.discardHeldOutput()
		}
		t.Reset(wait)
	}
}

// settleOutput lets what the console wrote leave before Close closes the
// port, and discards only what cannot: output still queued after the time
// its bytes take at the port's rate, plus a margin, at most settleLimit
// (flow control, or a USB device that stopped reading, holds it; closing
// the port would wait for it). Output that leaves is never flushed: that
// would drop the end of the last send (a pty's queue reads empty, and a
// flush loses what its other side has not read yet). The caller holds the
// write turn. It returns a *DiscardError, or nil.
func (c *Console) settleOutput() error {
	c.mu.RLock()
	port := c.port
	c.mu.RUnlock()
	if port == nil {
		return nil
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
			deadline = time.Now().Add(c.sendTime(n))
		}
		if time.Now().After(deadline) {
			c.discardHeldOutput()
			return &DiscardError{Path: c.Path(), N: n}
		}
		time.Sleep(time.Millisecond)
	}
}

// sendTime is how long n bytes may take to leave at the port's rate: ten
// bits a byte, twice over, and a margin; at most settleLimit.
func (c *Console) sendTime(n int) time.Duration {
	baud := c.cfg.Baud
	if baud <= 0 {
		baud = 115200
	}
	return min(settleLimit, 100*time.Millisecond+time.Duration(n)*20*time.Second/time.Duration(baud))
}

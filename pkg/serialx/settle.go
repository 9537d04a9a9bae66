package serialx

import (
	"fmt"
	"time"
)

// settleLimit bounds how long Close waits for output that flow control
// holds back before it discards it.
const settleLimit = 2 * time.Second

// settleOutput lets what the console wrote leave before Close closes the
// port, and discards only what cannot: a write still waiting for room, or
// output that flow control has held back for longer than the bytes queued
// take to send at the port's rate, plus a margin. Without flow control
// nothing can hold output back: closing the port sends what the driver
// holds, and flushing it would drop the end of the last send (a pty loses
// what its other side has not read yet). It returns an error saying what
// was discarded, or nil.
func (c *Console) settleOutput() error {
	if len(c.wsem) > 0 {
		// A write under way: it waits for room flow control does not
		// give, or Close interrupts it; it says what it did not send.
		c.discardHeldOutput()
		return nil
	}
	if flow, _ := c.cfg.flowControl(); flow == "none" {
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
			return fmt.Errorf("close %s: %d bytes written were still held back by flow control (the device sent XOFF or holds CTS low) and were discarded", c.Path(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

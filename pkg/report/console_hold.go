package report

import (
	"fmt"
	"time"
)

// DefaultHold is the ConsoleOptions.Hold hilrun run gives its progress
// console: what it prints is on screen at most this long after the event,
// which reads as at once.
const DefaultHold = 100 * time.Millisecond

// maxHeld bounds what a Console holds back, in bytes: past it, the event
// that printed it writes it before returning, as a console without Hold
// does (a terminal that does not read slows the run rather than fill
// memory).
const maxHeld = 1 << 20

// held reports whether the Console holds what it prints (ConsoleOptions.Hold).
func (c *Console) held() bool { return c.opts.Hold > 0 }

// hold keeps what the current event printed (c.buf) for the next write,
// and has the timer write it within Hold; mu is held.
func (c *Console) hold() {
	c.out.Write(c.buf.Bytes())
	if c.armed {
		return
	}
	c.armed = true
	if c.timer == nil {
		c.timer = time.AfterFunc(c.opts.Hold, c.fire)
		return
	}
	c.timer.Reset(c.opts.Hold)
}

// fire is the hold timer's: it writes what is held.
func (c *Console) fire() {
	c.mu.Lock()
	c.armed = false
	c.mu.Unlock()
	c.writeOut(true)
}

// unlock releases mu. With Hold, it then writes what is held when what
// was printed must be seen now (urgent: the end of a sequence, a
// summary) or when too much is held.
func (c *Console) unlock() {
	now := c.held() && (c.urgent || c.out.Len() > maxHeld)
	c.urgent = false
	c.mu.Unlock()
	if now {
		c.writeOut(true)
	}
}

// idleEvery is how long after a write Idle writes again: a write wakes
// whatever reads the terminal or the pipe (a terminal, a CI runner's
// log reader), which on a small machine takes the processor from the
// device or the virtual board the run waits for. Fast steps are written
// in a few batches a second, which reads as at once.
const idleEvery = 20 * time.Millisecond

// Idle writes what the Console holds, as the run waits for its device
// (runner.Idler): the write then costs its steps nothing. It writes at
// most once per idleEvery (the timer writes within Hold whatever Idle
// leaves), returns at once when a write is under way, and does nothing
// without Hold.
func (c *Console) Idle() {
	if c.held() && time.Duration(c.nanotime()-c.lastWrite.Load()) >= idleEvery {
		c.writeOut(false)
	}
}

// nanotime is the Console's clock for idleEvery: nanoseconds on the
// monotonic clock since it was made.
func (c *Console) nanotime() int64 { return int64(time.Since(c.born)) }

// Flush writes everything the Console holds and returns when it is
// written: before other output to the same terminal or log (a warning,
// a prompt), or when the run is interrupted. Without Hold there is never
// anything to write.
func (c *Console) Flush() {
	if c.held() {
		c.writeOut(true)
	}
}

// writeOut writes what is held in one Write, the running line cleared
// before it and drawn as it is now after it. wmu orders the writes, so
// that mu is not held while one is under way: the run's events do not
// wait for the terminal. Without block it returns at once when another
// write is under way.
func (c *Console) writeOut(block bool) {
	if block {
		c.wmu.Lock()
	} else if !c.wmu.TryLock() {
		return
	}
	defer c.wmu.Unlock()
	c.mu.Lock()
	data := c.takeLocked()
	c.mu.Unlock()
	if len(data) == 0 {
		return
	}
	c.lastWrite.Store(c.nanotime())
	if _, err := c.w.Write(data); err != nil {
		c.mu.Lock()
		if c.err == nil {
			c.err = fmt.Errorf("write console report: %w", err)
		}
		c.mu.Unlock()
	}
}

// takeLocked is what writeOut writes, in c.wbuf: nothing when nothing is
// held and the running line is as shown. mu and wmu are held.
func (c *Console) takeLocked() []byte {
	if c.err != nil {
		c.out.Reset()
		return nil
	}
	want, secs := "", int64(0)
	if c.opts.Color && c.wait != nil {
		elapsed := max(c.now().Sub(c.wait.started), 0)
		secs = int64(elapsed.Round(time.Second) / time.Second)
		if c.out.Len() == 0 && c.wait == c.shownFor && secs == c.shownSecs {
			return nil // the running line on screen says as much
		}
		want = c.paint(ansiDim, c.runningText(elapsed))
	}
	if c.out.Len() == 0 && want == c.shown {
		return nil
	}
	c.shownFor, c.shownSecs = c.wait, secs
	c.wbuf.Reset()
	if c.shown != "" {
		c.wbuf.WriteString(ansiClearLine)
	}
	c.wbuf.Write(c.out.Bytes())
	c.wbuf.WriteString(want)
	c.out.Reset()
	c.shown = want
	return c.wbuf.Bytes()
}

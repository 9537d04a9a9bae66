package serialx

import (
	"context"
	"errors"
	"time"
)

// counter is a port that counts the bytes it received, for CatchUp:
// pollPort on Linux, and netPort where its socket can be asked what it
// holds.
type counter interface {
	// arrived returns how many data bytes the port will have handed to
	// its reader, since it opened, once everything it held when called
	// (in the driver's input queue, a socket, its own queue) is read.
	arrived(ctx context.Context) (int64, error)
}

// catchUpRecheck is how often CatchUp looks whether the port it waits on
// was replaced (a reconnect, a release), whose bytes it then no longer
// waits for.
const catchUpRecheck = 100 * time.Millisecond

// CatchUp waits until the console's reader has taken in every byte the
// port held when CatchUp was called, in the kernel's input queue (TIOCINQ)
// or, for a network port, in the socket (FIONREAD) and the port's own
// queue, and returns the cursor just past them: the offset a reply to
// something written next begins at, with all that came before it behind.
// Write's cursor alone is where the reader had got to, which can be
// before output the device printed long ago (a banner printed before the
// port was opened).
//
// A port that cannot say what it holds (outside Linux, a port from
// Config.OpenPort), a console that is disconnected, released or closed,
// and a port replaced meanwhile need no waiting: CatchUp returns the
// cursor as it is. It fails only when ctx ends first.
func (c *Console) CatchUp(ctx context.Context) (int64, error) {
	c.mu.RLock()
	port, base := c.port, c.base
	c.mu.RUnlock()
	cnt, ok := port.(counter)
	if !ok {
		return c.buf.End(), nil
	}
	// The driver's input queue holds a few KiB (4 KiB on a pty); more
	// waits behind it in the kernel, where it is not counted, and moves
	// up as the reader empties the queue. So ask again while the port
	// held something, a bounded number of times (a device that never
	// stops printing always holds something).
	for range catchUpRounds {
		n, err := cnt.arrived(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return c.buf.End(), ctxErr(ctx)
			}
			// The port is closing or gone: nothing more comes from it.
			return c.buf.End(), nil
		}
		target := base + n
		if c.buf.End() >= target {
			break
		}
		if done, err := c.awaitOffset(ctx, port, target); done || err != nil {
			return c.buf.End(), err
		}
	}
	return c.buf.End(), nil
}

// catchUpRounds bounds the times CatchUp asks the port what it holds.
const catchUpRounds = 16

// awaitOffset waits until the buffer reaches offset target; done is true
// when it never will: the port was replaced or the stream broke.
func (c *Console) awaitOffset(ctx context.Context, port any, target int64) (done bool, err error) {
	for {
		end := c.buf.End()
		if end >= target {
			return false, nil
		}
		c.mu.RLock()
		replaced := c.port != port
		c.mu.RUnlock()
		if replaced || c.buf.Err() != nil {
			return true, nil
		}
		wctx, cancel := context.WithTimeout(ctx, catchUpRecheck)
		c.buf.Wait(wctx, end)
		cancel()
		if ctx.Err() != nil {
			return true, ctxErr(ctx)
		}
	}
}

// progressLocked wakes the arrived calls waiting for fed to grow; the
// caller holds qmu.
func (p *netPort) progressLocked() {
	if p.progress != nil {
		close(p.progress)
		p.progress = nil
	}
}

// arrived returns the data bytes queued since the port opened once
// everything the socket held when called (FIONREAD, plus what its reads
// took) is decoded and queued: the count the console's reader reaches once
// it has read all of that. A port that cannot ask its socket fails.
func (p *netPort) arrived(ctx context.Context) (int64, error) {
	if p.rc == nil {
		return 0, errors.New("the socket cannot say what it holds")
	}
	target, err := p.rawReceived()
	if err != nil {
		return 0, err
	}
	for {
		p.qmu.Lock()
		if p.fed >= target || p.qerr != nil {
			n := p.queued
			p.qmu.Unlock()
			return n, nil
		}
		if p.progress == nil {
			p.progress = make(chan struct{})
		}
		ch := p.progress
		p.qmu.Unlock()
		select {
		case <-ch:
		case <-p.closed:
			return 0, errNetClosed
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}
}

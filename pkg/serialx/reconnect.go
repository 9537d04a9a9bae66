// A device that disconnects: recording it, reopening it with Reconnect, and
// waiting for it to come back.

package serialx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.bug.st/serial"
)

// disconnected handles a read error that is not our own Close: it records
// the disconnection, and with Reconnect reopens the port. It returns the
// new port, or nil when the reader should stop.
func (c *Console) disconnected(port serial.Port, rd *reader, err error) serial.Port {
	var pe *serial.PortError
	if errors.As(err, &pe) && pe.Code() == serial.PortClosed || errors.Is(err, io.EOF) {
		err = errHangUp // not closed by us: the device hung up
	}
	c.mu.Lock()
	if c.port != port || rd.stopped() {
		// Release or Close took the port and closes it.
		c.mu.Unlock()
		return nil
	}
	c.port = nil
	lock := c.lock
	c.lock = nil
	path := c.path
	derr := fmt.Errorf("%s: %w: %w", path, ErrDisconnected, err)
	if !c.closing.Load() {
		c.connected.Store(false)
		c.away.Store(&awayFrom{at: time.Now(), err: derr})
		// Without Reconnect a waiting expect fails at once. With it the
		// disconnection is expected (a board that resets its USB), so
		// waiters keep waiting, bounded by their own timeouts, and see
		// what the device prints once it is back.
		if !c.cfg.Reconnect {
			c.buf.SetErr(derr)
		}
	}
	c.mu.Unlock()
	port.Close()
	lock.release()
	c.log.event(time.Now(), c.buf.End(), "disconnected", derr.Error())
	if !c.closing.Load() {
		c.notify("disconnected", derr.Error())
	}
	if !c.cfg.Reconnect {
		return nil
	}
	return c.reconnect(rd)
}

// reconnect tries every reconnectInterval to reopen the port of a console
// with Reconnect, at the path Resolve finds or else Config.Path, until it
// opens (it returns the new port) or Close or Release stops rd (nil).
func (c *Console) reconnect(rd *reader) serial.Port {
	tick := time.NewTicker(reconnectInterval)
	defer tick.Stop()
	for {
		select {
		case <-c.ctx.Done():
			return nil
		case <-rd.stop:
			return nil
		case <-tick.C:
		}
		path := c.cfg.Path
		if c.cfg.Resolve != nil {
			p, err := c.cfg.Resolve(c.ctx)
			if err != nil || p == "" {
				continue
			}
			path = p
		}
		np, nl, err := c.openPort(c.ctx, path)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if c.closing.Load() || rd.stopped() {
			c.mu.Unlock()
			np.Close()
			nl.release()
			return nil
		}
		c.port, c.lock, c.path, c.levels = np, nl, path, c.openLevels()
		c.base = c.buf.End() // this reader delivered the old port's last byte
		c.connected.Store(true)
		c.away.Store(nil)
		c.reconnects.Add(1)
		c.opens.Add(1)
		c.buf.SetErr(nil)
		c.mu.Unlock()
		c.log.event(time.Now(), c.buf.End(), "reconnected", path)
		c.notify("reconnected", path)
		return np
	}
}

type awayFrom struct {
	at  time.Time
	err error
}

// Disconnected returns nil while the device is connected, or, while a
// console with Reconnect waits for its device to come back, an error
// wrapping ErrDisconnected that says since when: an expect that times out
// then timed out on a device that is not there, which is a bench error,
// not the device's answer. Without Reconnect, Expect and Capture already
// fail at once with ErrDisconnected.
func (c *Console) Disconnected() error {
	a := c.away.Load()
	if a == nil || c.closing.Load() || c.released.Load() {
		return nil
	}
	return fmt.Errorf("%w; it has not come back in the %s since (reconnect: true)", a.err, time.Since(a.at).Round(time.Millisecond))
}

// ReconnectWait bounds how long a write to a console with Reconnect waits
// for its device to come back.
const ReconnectWait = 10 * time.Second

// awaitPort returns nil when the port is open. For a console with Reconnect
// whose device is away it waits for it, up to ReconnectWait or ctx; what
// says what was waiting, in the error for ctx ("write to /dev/ttyACM0").
func (c *Console) awaitPort(ctx context.Context, what func(path string) string) error {
	err := c.unavailable()
	if err == nil || !c.cfg.Reconnect || errors.Is(err, ErrClosed) || errors.Is(err, ErrReleased) {
		return err
	}
	deadline := time.Now().Add(ReconnectWait)
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("%s: waiting for the device to come back: %w", what(c.Path()), ctxErr(ctx))
		case <-tick.C:
		}
		if err = c.unavailable(); err == nil || errors.Is(err, ErrClosed) || errors.Is(err, ErrReleased) {
			return err
		}
	}
	return fmt.Errorf("%w (it did not come back within %s)", err, ReconnectWait)
}

// unavailable returns why the console cannot write now, or nil.
func (c *Console) unavailable() error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.port != nil {
		return nil
	}
	if c.closing.Load() {
		return fmt.Errorf("%s: %w", c.path, ErrClosed)
	}
	if c.released.Load() {
		return fmt.Errorf("%s: %w", c.path, ErrReleased)
	}
	if err := c.buf.Err(); err != nil {
		return err
	}
	return fmt.Errorf("%s: %w", c.path, ErrDisconnected)
}

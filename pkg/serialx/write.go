// Writing to the port, and ending a write that flow control holds up.

package serialx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"
)

// Write sends all of p, looping over short writes, and returns the cursor
// of the output that follows it: End() just before the first byte was
// written, so an expect from it sees only the reply. Writes are serialized,
// and take turns with modem control (SetLines, PulseLines, Break,
// ResetSequence).
//
// ctx is checked before each chunk of at most 1 KiB; a chunk the driver does
// not accept (flow control holding the line) blocks until it does or the
// console closes. After a disconnection Write returns the error wrapping
// ErrDisconnected; while released (see Release) one wrapping ErrReleased,
// without waiting; after Close one wrapping ErrClosed.
func (c *Console) Write(ctx context.Context, p []byte) (cursor int64, err error) {
	select {
	case c.wsem <- struct{}{}:
	case <-ctx.Done():
		return c.buf.End(), fmt.Errorf("write to %s: %w", c.Path(), ctxErr(ctx))
	}
	defer func() { <-c.wsem }()

	cursor = c.buf.End()
	if err := c.awaitPort(ctx, func(path string) string { return "write to " + path }); err != nil {
		return cursor, err
	}
	if ctx.Err() != nil {
		return cursor, fmt.Errorf("write to %s: %w", c.Path(), ctxErr(ctx))
	}
	c.log.tx(time.Now(), cursor, c.cfg.Secrets.Mask(p))
	written := 0
	for written < len(p) {
		if ctx.Err() != nil {
			err = fmt.Errorf("write to %s: %d of %d bytes written: %w", c.Path(), written, len(p), ctxErr(ctx))
			break
		}
		c.mu.RLock()
		port, path := c.port, c.path
		if port == nil {
			c.mu.RUnlock()
			err = c.unavailable()
			break
		}
		n, werr := port.Write(p[written:min(len(p), written+writeChunk)])
		c.mu.RUnlock()
		written += n
		c.tx.Add(int64(n))
		if werr != nil {
			if errors.Is(werr, syscall.EINTR) || errors.Is(werr, syscall.EAGAIN) {
				continue
			}
			if errors.Is(werr, os.ErrDeadlineExceeded) {
				// discardHeldOutput ended the write for Close or Release.
				why := ErrReleased
				if c.closing.Load() {
					why = ErrClosed
				}
				err = fmt.Errorf("write to %s: %d of %d bytes written, the rest discarded: the device did not take them in time (flow control, or a line too slow for them): %w", path, written, len(p), why)
				break
			}
			if isGone(werr) {
				err = fmt.Errorf("write to %s: %w: %w", path, ErrDisconnected, werr)
			} else {
				err = fmt.Errorf("write to %s: %w", path, werr)
			}
			break
		}
		if n == 0 {
			err = fmt.Errorf("write to %s: the driver accepted no bytes", path)
			break
		}
	}
	if err != nil {
		c.log.event(time.Now(), c.buf.End(), "write_error", err.Error())
	}
	return cursor, err
}

// discardHeldOutput discards the output that flow control holds back (the
// device sent XOFF or holds CTS low) and ends a write waiting for room, so
// that Close or Release can take the port. A port read through the poller
// then fails every later write; it is about to be closed. It returns how
// many bytes the driver's output queue held, when the driver says (0 when
// it does not).
func (c *Console) discardHeldOutput() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.port == nil {
		return 0
	}
	// Writes end first: on a UART the flush makes room, and a write
	// waiting for it would otherwise refill the queue that flow control
	// holds, which Close then waits for.
	if a, ok := c.port.(interface{ abortWrites() }); ok {
		a.abortWrites()
	}
	n, _ := outputQueued(c.port)
	c.port.ResetOutputBuffer()
	return n
}

// ctxErr returns ctx's error, wrapping its cause too when that differs, so
// that errors.Is finds both.
func ctxErr(ctx context.Context) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause == nil || errors.Is(cause, err) {
		return err
	}
	return fmt.Errorf("%w (%w)", cause, err)
}

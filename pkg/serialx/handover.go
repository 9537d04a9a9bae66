package serialx

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"go.bug.st/serial"
)

// ErrReleased is wrapped by the error of a Write to a console whose port is
// released for another program (see Release):
// `/dev/ttyACM0: port released for hand-over`.
var ErrReleased = errors.New("port released for hand-over")

// reacquirePoll is how often Reacquire looks for the device. It is shorter
// than reconnectInterval: a board that boots into its application right
// after an upload prints its banner at once, and a port that is not yet open
// has no reader to keep those bytes for (a USB CDC device drops them).
const reacquirePoll = 25 * time.Millisecond

// USBMatch identifies a USB serial device, as FindUSB takes it: vendor and
// product ID in hex, and a serial number ("" matches any).
type USBMatch struct {
	VID, PID, SerialNumber string
}

// ReacquireOptions says how Reacquire finds the port again.
type ReacquireOptions struct {
	// Timeout bounds the wait for the device to come back; 0 means
	// ReconnectWait (10 s). The context passed to Reacquire bounds it too.
	Timeout time.Duration
	// Resolve, if set, finds the port's path; it is called every 25 ms
	// until a path it returns opens. Errors mean "not back yet".
	Resolve func(ctx context.Context) (string, error)
	// USB, if set and Resolve is nil, finds the port with FindUSB.
	USB *USBMatch
}

// Released reports whether the console's port is released for another
// program (between Release and a successful Reacquire). Code that would
// open or write the port on its own initiative, a capture or a monitor,
// checks it so as not to disturb an upload in progress.
func (c *Console) Released() bool { return c.released.Load() }

// Release hands the port over to another program, such as a firmware
// uploader: it stops the reader, closes the port and removes its lock file,
// and returns once the port is closed, so the other program can open it.
// The console keeps its buffer, cursors, log, watchers and receivers. Until
// Reacquire, Write fails at once with an error wrapping ErrReleased, while
// Expect and Capture keep waiting (bounded by their own contexts) and see
// what the device prints after Reacquire; Stats reports Released.
//
// Whatever the device sends while the port is released is not read by the
// console. A pty keeps it queued for the next reader; a USB CDC ACM device
// (ttyACM*) or a USB-serial adapter whose tty nobody has open drops it, and
// an uploader that opens the port reads it. It is not in the console's
// output either way.
//
// A Write in progress finishes first, and so does modem control (a pulse,
// break or reset sequence); ctx bounds the wait for a Write, after which
// output that flow control holds back is discarded. Release of a released
// console returns nil. Release, Reacquire and Close
// are safe to call concurrently; they take turns. Release must not be
// called from a Watch or OnReceive callback, which runs on the reader it
// stops. Before releasing, Release notes the USB identity of the port (when
// it has a serial number), for Reacquire to follow the device if it comes
// back under another name.
func (c *Console) Release(ctx context.Context) error {
	if err := c.enterHandover(ctx); err != nil {
		return fmt.Errorf("release console %q: %w", c.name, err)
	}
	defer func() { <-c.hsem }()
	path := c.Path()
	if c.closing.Load() {
		return fmt.Errorf("release %s: %w", path, ErrClosed)
	}
	if c.released.Load() {
		return nil
	}
	c.follow = c.usbIdentity(path)

	// Let a write in progress finish, so that a command it sends (reboot
	// into the bootloader) reaches the device whole. One that flow control
	// holds up is discarded when ctx ends. Close, which waits for this
	// Release to end, ends the wait.
	select {
	case c.wsem <- struct{}{}:
	case <-ctx.Done():
		c.discardHeldOutput()
		select {
		case c.wsem <- struct{}{}:
		case <-c.ctx.Done():
			return fmt.Errorf("release %s: %w", path, ErrClosed)
		}
	case <-c.ctx.Done():
		return fmt.Errorf("release %s: %w", path, ErrClosed)
	}
	defer func() { <-c.wsem }()

	c.mu.Lock()
	port, lock, rd := c.port, c.lock, c.rd
	c.port, c.lock, c.rd = nil, nil, nil
	if rd != nil {
		rd.halt() // under mu, so a reconnection cannot install a port now
	}
	c.released.Store(true)
	c.connected.Store(false)
	// A disconnection error (the board reset into its bootloader) would
	// fail expects at once; during a hand-over they wait instead.
	c.buf.SetErr(nil)
	c.mu.Unlock()

	var err error
	if port != nil {
		err = port.Close()
	}
	if rd != nil {
		<-rd.done
	}
	c.flushHeld(false)
	lock.release()
	at := time.Now()
	c.startGap(at, path)
	c.log.event(at, c.buf.End(), "released", path)
	if err != nil {
		return fmt.Errorf("release %s: close: %w", path, err)
	}
	return nil
}

// Reacquire reopens the port after Release and resumes reading; the
// reader starts as soon as the port opens, so output from then on is
// captured from its first byte, at the offset where the stream stopped.
// It tries every 25 ms until the port opens or opt.Timeout passes. The
// port is found, in order of preference, by opt.Resolve; by opt.USB;
// by Config.Resolve; by the USB identity Release noted; else at the path it
// had. A port locked by another program (the uploader still running)
// counts as not back yet.
//
// The reopened port's DTR and RTS are as opening leaves them (see
// Config.DTR), not as SetLines or a reset sequence left the old one.
//
// Reacquire of a console that is not released returns nil. When it fails
// the console stays released: call Reacquire again or Close.
func (c *Console) Reacquire(ctx context.Context, opt ReacquireOptions) error {
	if err := c.enterHandover(ctx); err != nil {
		return fmt.Errorf("reacquire console %q: %w", c.name, err)
	}
	defer func() { <-c.hsem }()
	if c.closing.Load() {
		return fmt.Errorf("reacquire %s: %w", c.Path(), ErrClosed)
	}
	if !c.released.Load() {
		return nil
	}
	timeout := opt.Timeout
	if timeout <= 0 {
		timeout = ReconnectWait
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop := context.AfterFunc(c.ctx, cancel) // Close ends the wait
	defer stop()

	resolve := c.resolver(opt)
	tick := time.NewTicker(reacquirePoll)
	defer tick.Stop()
	var last error
	for {
		path, err := resolve(wctx)
		if err == nil && path == "" {
			err = errors.New("no port path")
		}
		if err == nil {
			port, lock, oerr := c.openPort(wctx, path)
			if oerr == nil {
				return c.install(port, lock, path)
			}
			err = oerr
		}
		last = err
		select {
		case <-wctx.Done():
			switch {
			case c.closing.Load():
				return fmt.Errorf("reacquire %s: %w", c.Path(), ErrClosed)
			case ctx.Err() != nil:
				return fmt.Errorf("reacquire %s: %w (last attempt: %w)", c.Path(), ctxErr(ctx), last)
			}
			return fmt.Errorf("reacquire %s: not back within %s: %w", c.Path(), timeout, last)
		case <-tick.C:
		}
	}
}

// install makes a reopened port the console's and starts reading it.
func (c *Console) install(port serial.Port, lock *portLock, path string) error {
	c.mu.Lock()
	if c.closing.Load() {
		c.mu.Unlock()
		port.Close()
		lock.release()
		return fmt.Errorf("reacquire %s: %w", path, ErrClosed)
	}
	c.port, c.lock, c.path, c.levels = port, lock, path, c.openLevels()
	c.startReaderLocked(port)
	c.released.Store(false)
	c.connected.Store(true)
	c.opens.Add(1)
	c.away.Store(nil)
	c.buf.SetErr(nil)
	c.mu.Unlock()
	at := time.Now()
	detail := path
	if g, ok := c.endGap(at); ok {
		detail = fmt.Sprintf("%s after %s released (since %s); what the device sent meanwhile was not read", path,
			g.Until.Sub(g.From).Round(time.Millisecond), g.From.UTC().Format(time.RFC3339Nano))
	}
	c.log.event(at, c.buf.End(), "reacquired", detail)
	return nil
}

// Gap is a time the console had let go of its port (Release to
// Reacquire): what the device sent then is not in the console's output or
// its log, which go on at Offset.
type Gap struct {
	// From is when the port was closed, Until when it was open again; zero
	// while it is still released.
	From, Until time.Time
	// Offset is the stream offset where the output stops and goes on.
	Offset int64
	// Path is the port that was let go of.
	Path string
}

// maxGaps bounds the gaps a console remembers; older ones are in the
// timeline.
const maxGaps = 64

// Gaps returns the console's last hand-over gaps (at most 64), oldest
// first; the timeline has them all, as "released" and "reacquired" events.
func (c *Console) Gaps() []Gap {
	c.gmu.Lock()
	defer c.gmu.Unlock()
	return append([]Gap(nil), c.gaps...)
}

func (c *Console) startGap(at time.Time, path string) {
	c.gmu.Lock()
	defer c.gmu.Unlock()
	if len(c.gaps) == maxGaps {
		c.gaps = append(c.gaps[:0], c.gaps[1:]...)
	}
	c.gaps = append(c.gaps, Gap{From: at, Offset: c.buf.End(), Path: path})
}

func (c *Console) endGap(at time.Time) (Gap, bool) {
	c.gmu.Lock()
	defer c.gmu.Unlock()
	if n := len(c.gaps); n > 0 && c.gaps[n-1].Until.IsZero() {
		c.gaps[n-1].Until = at
		return c.gaps[n-1], true
	}
	return Gap{}, false
}

// enterHandover takes the turn of Release, Reacquire and Close, or returns
// ctx's error.
func (c *Console) enterHandover(ctx context.Context) error {
	select {
	case c.hsem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctxErr(ctx)
	}
}

// resolver returns how Reacquire finds the port (see Reacquire).
func (c *Console) resolver(opt ReacquireOptions) func(context.Context) (string, error) {
	byUSB := func(m USBMatch) func(context.Context) (string, error) {
		return func(context.Context) (string, error) {
			ports, err := c.listPorts()
			if err != nil {
				return "", err
			}
			return findUSB(ports, m.VID, m.PID, m.SerialNumber)
		}
	}
	switch {
	case opt.Resolve != nil:
		return opt.Resolve
	case opt.USB != nil:
		return byUSB(*opt.USB)
	case c.cfg.Resolve != nil:
		return c.cfg.Resolve
	case c.follow != nil:
		return byUSB(*c.follow)
	}
	path := c.Path()
	return func(context.Context) (string, error) { return path, nil }
}

// usbIdentity returns the USB identity of the port at path, when it is a
// USB device with a serial number (without one, another board of the same
// model could be taken for it), else nil.
func (c *Console) usbIdentity(path string) *USBMatch {
	ports, err := c.listPorts()
	if err != nil {
		return nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		real = path
	}
	for _, p := range ports {
		if !p.IsUSB || p.SerialNumber == "" || p.VID == "" || p.PID == "" {
			continue
		}
		if p.Path == path || p.Path == real {
			return &USBMatch{VID: p.VID, PID: p.PID, SerialNumber: p.SerialNumber}
		}
		if r, err := filepath.EvalSymlinks(p.Path); err == nil && r == real {
			return &USBMatch{VID: p.VID, PID: p.PID, SerialNumber: p.SerialNumber}
		}
	}
	return nil
}

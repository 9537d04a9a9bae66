package serialx

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"time"

	"go.bug.st/serial"
)

// ErrNoModemLines is wrapped by the error of modem control (SetLines,
// PulseLines, Break, ResetSequence, and Config.DTR and RTS at open) on a
// port whose driver has no modem control lines, a pty for one: the bench
// is wired differently from what the test expects. The message names the
// port and what could not be done: `/dev/pts/3 has no modem control lines
// (it is a pty or its driver has none): cannot set DTR: inappropriate ioctl
// for device`.
var ErrNoModemLines = errors.New("no modem control lines")

// Lines says what to do with the modem output lines: true asserts a line
// ("on"; the pin of a USB-serial adapter's logic-level side then reads
// low), false negates it, nil leaves it as it is.
type Lines struct {
	DTR, RTS *bool
}

// String returns the levels l sets, "dtr=1 rts=0", leaving out the nil
// lines; "none" when both are nil.
func (l Lines) String() string {
	var parts []string
	if l.DTR != nil {
		parts = append(parts, "dtr="+bit(*l.DTR))
	}
	if l.RTS != nil {
		parts = append(parts, "rts="+bit(*l.RTS))
	}
	if parts == nil {
		return "none"
	}
	return strings.Join(parts, " ")
}

func (l Lines) empty() bool { return l.DTR == nil && l.RTS == nil }

// names returns the lines l sets, "DTR", "RTS" or "DTR and RTS", for
// messages.
func (l Lines) names() string {
	switch {
	case l.DTR != nil && l.RTS != nil:
		return "DTR and RTS"
	case l.DTR != nil:
		return "DTR"
	case l.RTS != nil:
		return "RTS"
	}
	return "no line"
}

func bit(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// lineLevels are the levels of a port's DTR and RTS, as the console last
// set them or, for a line it has not set since the port opened, as it
// assumes opening left them (see Console.openLevels).
type lineLevels struct{ dtr, rts bool }

// String returns both levels, "dtr=0 rts=1", as the timeline records them.
func (v lineLevels) String() string { return "dtr=" + bit(v.dtr) + " rts=" + bit(v.rts) }

// restoring returns the Lines that set the lines l names back to v.
func (v lineLevels) restoring(l Lines) Lines {
	var r Lines
	if l.DTR != nil {
		r.DTR = new(v.dtr)
	}
	if l.RTS != nil {
		r.RTS = new(v.rts)
	}
	return r
}

// openLevels returns the levels of DTR and RTS right after the port
// opened: those Config.DTR and RTS set, else asserted, which is what Linux
// and macOS do when a tty is opened (and what serial.Open leaves on
// Windows). The console cannot read its output lines back (TIOCMGET
// reports them, but not every driver and no Windows port does), so this is
// an assumption for the lines Config leaves alone.
//
// A reconnection or Reacquire resets the levels to these rather than
// reapplying the last ones set: closing the old port (HUPCL) and opening
// the new one already changed the lines, so the old levels no longer
// describe the device, and reapplying them would be a second, unrequested
// change that could reset the board again or hold it in reset. A step that
// needs particular levels after a hand-over sets them itself.
func (c *Console) openLevels() lineLevels {
	v := lineLevels{dtr: true, rts: true}
	if c.cfg.DTR != nil {
		v.dtr = *c.cfg.DTR
	}
	if c.cfg.RTS != nil {
		v.rts = *c.cfg.RTS
	}
	return v
}

// SetLines sets the modem output lines given (nil leaves a line as it
// is), DTR first, and records the
// levels then in effect in the timeline ("lines", "dtr=1 rts=0"). With
// neither given it does nothing and returns nil.
//
// Like Write, SetLines takes its turn after a Write or other modem control
// in progress; while the device is away it waits as Write does (with
// Reconnect, up to ReconnectWait or ctx) or fails at once with an error
// wrapping ErrDisconnected, ErrReleased or ErrClosed. On a port without
// modem lines (a pty) it changes nothing and returns an error wrapping
// ErrNoModemLines that names the port.
func (c *Console) SetLines(ctx context.Context, dtr, rts *bool) error {
	l := Lines{DTR: dtr, RTS: rts}
	if l.empty() {
		return nil
	}
	m, err := c.beginModem(ctx, "set "+l.names())
	if err != nil {
		return err
	}
	defer m.end()
	return m.failed(m.set(l))
}

// PulseLines sets the lines given, holds them for hold, then sets each of
// them back to the level it had before (as the console tracks them: see
// Config.DTR), all while holding off writes and other modem control. The
// hold is measured from the end of the last ioctl that set the lines, so
// the lines stay changed for at least hold; 0 changes them only for as long
// as the ioctls take.
//
// When ctx ends or the console closes during the hold, PulseLines stops
// holding at once, still restores the lines (a pulse cut short is better
// than a board left in reset), and returns an error wrapping ctx's error
// (or ErrClosed). Waiting for the port and errors are as for SetLines;
// giving neither line is an error.
func (c *Console) PulseLines(ctx context.Context, dtr, rts *bool, hold time.Duration) error {
	l := Lines{DTR: dtr, RTS: rts}
	what := "pulse " + l.names()
	if l.empty() {
		return fmt.Errorf("pulse lines of console %q: no line to pulse", c.name)
	}
	if hold < 0 {
		return fmt.Errorf("%s of console %q: negative hold %s", what, c.name, hold)
	}
	m, err := c.beginModem(ctx, what)
	if err != nil {
		return err
	}
	defer m.end()
	prev := m.levels()
	c.log.event(time.Now(), c.buf.End(), "pulse", fmt.Sprintf("%s for %s", l, hold))
	err = m.set(l)
	if err == nil {
		if herr := m.hold(ctx, hold); herr != nil {
			err = fmt.Errorf("%s on %s: stopped during the %s hold: %w", what, m.path, hold, herr)
		}
	}
	return m.failed(m.restore(err, prev.restoring(l)))
}

// Break sends a break (the line held at space) for d, which must be
// positive, through go.bug.st/serial's Port.Break, and records it in the
// timeline ("break", "250ms") as it starts.
//
// ctx bounds the wait for the port, as for SetLines, but not the break:
// go.bug.st/serial sleeps through it and offers no way to end it early, so
// Break returns after d whatever ctx does, and writes, modem control,
// Release and Close wait for it. A pty accepts a break and silently ignores
// it; so that a test does not pass without the break it asked for, Break
// fails on a port without modem lines, as SetLines does, without sending.
func (c *Console) Break(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return fmt.Errorf("send a break on %s: duration %s is not positive", c.Path(), d)
	}
	m, err := c.beginModem(ctx, "send a break")
	if err != nil {
		return err
	}
	defer m.end()
	c.log.event(time.Now(), c.buf.End(), "break", d.String())
	return m.failed(m.do(func(p serial.Port) error { return p.Break(d) }))
}

// modem is one modem-control operation in progress. It holds the
// console's write turn (wsem), so that writes and other modem control wait
// for it and a reset sequence is never interleaved with output, and the
// port it began on.
type modem struct {
	c    *Console
	port serial.Port
	path string
	what string // what errors say could not be done: "set DTR"
}

// beginModem takes the write turn and waits for the port as Write does,
// then checks that the port has modem lines (TIOCMGET), so that nothing is
// changed on a port that has none.
func (c *Console) beginModem(ctx context.Context, what string) (*modem, error) {
	m := &modem{c: c, what: what}
	select {
	case c.wsem <- struct{}{}:
	case <-ctx.Done():
		return nil, m.failed(fmt.Errorf("%s on %s: %w", what, c.Path(), ctxErr(ctx)))
	}
	err := c.awaitPort(ctx, func(path string) string { return what + " on " + path })
	switch {
	case err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()):
		// awaitPort's own message: "set DTR on /dev/ttyACM0: waiting ...".
	case err != nil:
		// Why the port is unavailable, as Write returns it:
		// "/dev/ttyACM0: port released for hand-over".
		err = fmt.Errorf("%s: %w", what, err)
	case ctx.Err() != nil:
		err = fmt.Errorf("%s on %s: %w", what, c.Path(), ctxErr(ctx))
	default:
		c.mu.RLock()
		m.port, m.path = c.port, c.path
		c.mu.RUnlock()
		if m.port == nil { // gone since awaitPort looked
			if err = c.unavailable(); err == nil { // and back again
				err = fmt.Errorf("%s: %w", c.Path(), ErrDisconnected)
			}
			err = fmt.Errorf("%s: %w", what, err)
		} else {
			err = m.do(func(p serial.Port) error {
				_, err := p.GetModemStatusBits()
				return err
			})
		}
	}
	if err != nil {
		<-c.wsem
		return nil, m.failed(err)
	}
	return m, nil
}

// end gives the write turn back.
func (m *modem) end() { <-m.c.wsem }

// do runs fn on the operation's port, holding mu so that the port is not
// closed under it; it fails when the port was closed or replaced since the
// operation began.
func (m *modem) do(fn func(serial.Port) error) error {
	c := m.c
	c.mu.RLock()
	if c.port != m.port {
		c.mu.RUnlock()
		if c.closing.Load() {
			return fmt.Errorf("%s on %s: %w", m.what, m.path, ErrClosed)
		}
		return fmt.Errorf("%s on %s: %w (the port closed during the operation)", m.what, m.path, ErrDisconnected)
	}
	err := fn(m.port)
	c.mu.RUnlock()
	switch {
	case err == nil:
		return nil
	case errors.Is(err, ErrNoModemLines): // a tcp:// port says why itself
		return fmt.Errorf("cannot %s: %w", m.what, err)
	case errors.Is(err, syscall.ENOTTY) || errors.Is(err, syscall.EINVAL):
		return fmt.Errorf("%s has %w (it is a pty or its driver has none): cannot %s: %w", m.path, ErrNoModemLines, m.what, err)
	case isGone(err):
		return fmt.Errorf("%s on %s: %w: %w", m.what, m.path, ErrDisconnected, err)
	}
	return fmt.Errorf("%s on %s: %w", m.what, m.path, err)
}

// current reports whether the operation's port is still the console's.
func (m *modem) current() bool {
	m.c.mu.RLock()
	defer m.c.mu.RUnlock()
	return m.c.port == m.port
}

// levels returns the tracked levels of the lines.
func (m *modem) levels() lineLevels {
	m.c.mu.RLock()
	defer m.c.mu.RUnlock()
	return m.c.levels
}

// set sets the lines l names, DTR first, tracks their levels and records
// the levels then in effect in the timeline.
func (m *modem) set(l Lines) error {
	c := m.c
	changed := false
	var err error
	for _, line := range []struct {
		val   *bool
		set   func(serial.Port, bool) error
		level func(*lineLevels) *bool
	}{
		{l.DTR, serial.Port.SetDTR, func(v *lineLevels) *bool { return &v.dtr }},
		{l.RTS, serial.Port.SetRTS, func(v *lineLevels) *bool { return &v.rts }},
	} {
		if line.val == nil {
			continue
		}
		if err = m.do(func(p serial.Port) error { return line.set(p, *line.val) }); err != nil {
			break
		}
		changed = true
		c.mu.Lock()
		if c.port == m.port { // else a reconnection has reset the levels
			*line.level(&c.levels) = *line.val
		}
		c.mu.Unlock()
	}
	if changed {
		c.log.event(time.Now(), c.buf.End(), "lines", m.levels().String())
	}
	return err
}

// hold waits d, or until ctx ends or the console closes, and then returns
// ctx's error or ErrClosed.
func (m *modem) hold(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctxErr(ctx)
	case <-m.c.ctx.Done():
		return ErrClosed
	}
}

// restore sets the lines back as back says after an operation that ended
// with err (nil when it succeeded) and returns the operation's result.
// A port that closed or was replaced meanwhile is left alone: its lines
// are no longer the ones that were changed.
func (m *modem) restore(err error, back Lines) error {
	if back.empty() || !m.current() {
		return err
	}
	rerr := m.set(back)
	switch {
	case rerr != nil && err != nil:
		return fmt.Errorf("%w; restoring %s: %w", err, back, rerr)
	case rerr != nil:
		return fmt.Errorf("restoring %s: %w", back, rerr)
	case err != nil:
		return fmt.Errorf("%w (lines restored to %s)", err, back)
	}
	return nil
}

// failed records a failed modem-control operation in the timeline and
// returns err.
func (m *modem) failed(err error) error {
	if err != nil {
		m.c.log.event(time.Now(), m.c.buf.End(), "modem_error", err.Error())
	}
	return err
}

// Running a command across dropped connections: a connection found closed
// is replaced once, and while OpenOCD cannot be reached the command is
// retried with back-off, when that is safe.

package openocd

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// Back-off of the retries of a command whose connection dropped: the
// first wait, the longest, and how long retries go on under a context
// without a deadline.
const (
	retryFirst = 10 * time.Millisecond
	retryMax   = 500 * time.Millisecond
	retryFor   = 10 * time.Second
)

// run runs cmd, which may have effects on the target, so it is sent again
// after a dropped connection only when none of it was sent: while
// OpenOCD cannot be reached, it is retried with back-off until ctx ends.
// The caller holds the turn.
func (s *Session) run(ctx context.Context, cmd string) (Reply, error) {
	return s.retry(ctx, cmd, false)
}

// runSafe runs cmd, a command that is safe to repeat such as a memory
// read: after a dropped connection it is retried with back-off until ctx
// ends, even when it was sent or ran. The caller holds the turn.
func (s *Session) runSafe(ctx context.Context, cmd string) (Reply, error) {
	return s.retry(ctx, cmd, true)
}

func (s *Session) retry(ctx context.Context, cmd string, safe bool) (Reply, error) {
	wait := retryFirst
	var began time.Time
	var last error // the last ErrUnavailable
	gaveUp := func(tries int) error {
		return fmt.Errorf("%w (tried %d times over %v)", last, tries, time.Since(began).Round(time.Millisecond))
	}
	for tries := 1; ; tries++ {
		r, sent, err := s.runOnce(ctx, cmd)
		var ce *CommandError
		if last != nil && err != nil && ctx.Err() != nil && !errors.As(err, &ce) {
			return r, gaveUp(tries - 1) // the deadline came as it was retried
		}
		if err == nil || !errors.Is(err, ErrUnavailable) || (sent && !safe) {
			return r, err
		}
		if tries == 1 {
			began = time.Now()
		}
		last = err
		_, bounded := ctx.Deadline()
		if !bounded && time.Since(began) >= retryFor {
			return r, gaveUp(tries)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return r, gaveUp(tries)
		case <-t.C:
		}
		wait = min(2*wait, retryMax)
	}
}

// notSentError is a write that sent nothing.
type notSentError struct{ err error }

func (e *notSentError) Error() string { return e.err.Error() }

func (e *notSentError) Unwrap() error { return e.err }

// runOnce runs cmd, replacing once a connection found closed before cmd
// ran. sent says whether any of cmd reached the connection.
func (s *Session) runOnce(ctx context.Context, cmd string) (_ Reply, sent bool, _ error) {
	fresh := false // whether this call connected
	for {
		if err := ctx.Err(); err != nil {
			return Reply{}, sent, fmt.Errorf("openocd at %s: %q not sent: %w", s.shown, cmd, err)
		}
		s.mu.Lock()
		c, closed := s.conn, s.closed
		s.mu.Unlock()
		if closed {
			return Reply{}, sent, fmt.Errorf("openocd at %s: %q: %w", s.shown, cmd, ErrClosed)
		}
		if c != nil && !fresh && s.tr == TclRPC && peerClosed(c.Conn) {
			// Over Tcl RPC nothing tells a request that never ran from
			// one that ran and lost its reply: a connection the server
			// closed while it was idle is replaced before sending.
			s.drop(c)
			c = nil
		}
		if c == nil {
			var err error
			c, err = s.connect(ctx, "reconnect to")
			if err != nil {
				return Reply{}, sent, err
			}
			s.mu.Lock()
			if s.closed {
				s.mu.Unlock()
				c.Close()
				return Reply{}, sent, fmt.Errorf("openocd at %s: %q: %w", s.shown, cmd, ErrClosed)
			}
			s.conn = c
			s.mu.Unlock()
			fresh = true
		}

		start := time.Now()
		s.seq++
		req, err := s.encode(s.seq, cmd)
		if err != nil {
			return Reply{}, sent, fmt.Errorf("openocd: %w", err)
		}
		r, log, echoed, err := s.roundTrip(ctx, c, s.seq, req)
		var ns *notSentError
		sent = sent || !errors.As(err, &ns)
		if err == nil {
			if r.code == 0 || r.code == 2 { // ok, or Tcl's return
				return Reply{Result: r.out, Log: log}, true, nil
			}
			out := log
			if r.out != "" {
				out = append(out[:len(out):len(out)], r.out)
			}
			return Reply{Log: log}, true, &CommandError{Cmd: cmd, Output: strings.Join(out, "\n"), Code: r.code}
		}

		s.drop(c)
		switch {
		case s.isClosed():
			return Reply{}, sent, fmt.Errorf("openocd at %s: %q: %w", s.shown, cmd, ErrClosed)
		case ctx.Err() != nil || errors.Is(err, os.ErrDeadlineExceeded):
			cerr := ctx.Err()
			if cerr == nil {
				cerr = context.DeadlineExceeded
			}
			if cause := context.Cause(ctx); cause != nil && cause != cerr {
				cerr = fmt.Errorf("%w: %w", cerr, cause)
			}
			return Reply{}, sent, fmt.Errorf("openocd at %s did not answer %q within %v: %w",
				s.shown, cmd, time.Since(start).Round(time.Millisecond), cerr)
		case !echoed && !fresh:
			// OpenOCD runs a telnet line only after echoing it, and a
			// Tcl RPC request only once its last byte arrived: this one
			// never ran, so it is safe to send it again on a new
			// connection.
			continue
		case echoed:
			return Reply{}, sent, &unavailableError{
				msg: fmt.Sprintf("openocd at %s: connection lost while %q ran (its effect is unknown)", s.shown, cmd),
				err: err,
			}
		default:
			return Reply{}, sent, &unavailableError{
				msg: fmt.Sprintf("openocd at %s: connection lost before %q ran", s.shown, cmd),
				err: err,
			}
		}
	}
}

// One request's round trip on a connection: over telnet, its echo, its frame
// and the log lines between; over Tcl RPC, its frame.

package openocd

import (
	"context"
	"fmt"
)

// encode returns the request that runs cmd as request seq, without its
// terminator.
func (s *Session) encode(seq uint64, cmd string) (string, error) {
	if s.tr == TclRPC {
		return encodeRPC(seq, cmd)
	}
	return encodeRequest(seq, cmd)
}

// roundTrip sends req, request seq, on c and reads until its reply. It
// returns the lines OpenOCD logged while the request ran, and whether the
// request may have run: over telnet, OpenOCD echoes a line before it runs
// it, so without an echo the command did not run; over Tcl RPC it runs a
// request once its terminator arrived.
func (s *Session) roundTrip(ctx context.Context, c *conn, seq uint64, req string) (r reply, log []string, echoed bool, err error) {
	disarm := armDeadline(ctx, c.Conn)
	defer disarm()
	if s.tr == TclRPC {
		return s.rpcRoundTrip(c, seq, req)
	}

	if n, err := c.Write([]byte(req + "\n")); err != nil {
		if n == 0 {
			err = &notSentError{err}
		}
		return r, nil, false, err
	}
	var rerr error
	for {
		for {
			f, ok := c.dec.next()
			if !ok {
				break
			}
			if f.seq == seq {
				log, echoed = s.sortLines(c, seq, log, echoed)
				return f, log, true, nil
			}
			if f.seq > seq {
				return r, log, echoed, fmt.Errorf("answer to request %d arrived while request %d was waiting", f.seq, seq)
			}
			// A stale answer, to a request given up on: skip it.
		}
		log, echoed = s.sortLines(c, seq, log, echoed)
		if rerr != nil {
			return r, log, echoed, rerr
		}
		var n int
		n, rerr = c.Read(c.buf)
		if n > 0 {
			c.dec.feed(c.buf[:n])
		}
	}
}

// rpcRoundTrip is roundTrip over Tcl RPC; the caller armed the deadline.
func (s *Session) rpcRoundTrip(c *conn, seq uint64, req string) (r reply, log []string, ran bool, err error) {
	b := make([]byte, 0, len(req)+1)
	b = append(append(b, req...), sub)
	if n, err := c.Write(b); err != nil {
		if n == 0 {
			err = &notSentError{err}
		}
		// Without its terminator the server did not run the request.
		return r, nil, n == len(b), err
	}
	for {
		for {
			f, msg, ok, err := c.rpc.next()
			if err != nil {
				return r, nil, true, err
			}
			if !ok {
				break
			}
			if f.seq == 0 { // a message outside frames
				if msg != "" && s.log != nil {
					s.log(msg)
				}
				continue
			}
			if f.seq > seq {
				return r, nil, true, fmt.Errorf("answer to request %d arrived while request %d was waiting", f.seq, seq)
			}
			if f.seq < seq {
				continue // a stale answer, to a request given up on
			}
			log = logLines(f.log)
			if s.log != nil {
				for _, l := range log {
					s.log(l)
				}
			}
			return reply{seq: f.seq, code: f.code, out: f.out}, log, true, nil
		}
		n, err := c.Read(c.buf)
		if n > 0 {
			c.rpc.feed(c.buf[:n])
		}
		if err != nil && n == 0 {
			return r, nil, true, err
		}
	}
}

// sortLines takes the noise lines c decoded, passes the log lines to the
// log hook and appends those that follow the echo of request seq to log.
func (s *Session) sortLines(c *conn, seq uint64, log []string, echoed bool) ([]string, bool) {
	for _, l := range c.dec.takeLines() {
		if l.echo != 0 {
			if l.echo == seq {
				echoed = true
			}
			c.greeted = true
			continue
		}
		if !c.greeted {
			continue
		}
		if s.log != nil {
			s.log(l.text)
		}
		if echoed {
			log = append(log, l.text)
		}
	}
	return log, echoed
}

// One request and its reply over the transport: the acknowledgement owed in
// ack mode, packets read and damaged ones asked for again, stop replies that
// arrive first, and a server that is not a GDB stub told by what it sends.

package gdbremote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"
)

// send writes one packet; in ack mode the stub's '+' is consumed with the
// reply.
func (s *Session) send(data []byte) error {
	s.nextDeadline()
	s.wbuf = s.wbuf[:0]
	if s.ackOwed {
		s.wbuf = append(s.wbuf, '+')
		s.ackOwed = false
	}
	s.wbuf = frame(s.wbuf, data)
	_, err := s.t.Write(s.wbuf)
	return err
}

// nextDeadline gives the request about to go out ReplyTimeout for its
// reply, in the requests of the public methods (the handshake has its own
// timeout).
func (s *Session) nextDeadline() {
	if s.perReply {
		s.t.setDeadline(time.Now().Add(s.opts.ReplyTimeout))
	}
}

// withAck returns c, after the acknowledgement owed if one is.
func (s *Session) withAck(c byte) []byte {
	if s.ackOwed {
		s.ackOwed = false
		return []byte{'+', c}
	}
	return []byte{c}
}

// fill reads what the stub sent into the decoder.
func (s *Session) fill() error {
	n, err := s.t.Read(s.rbuf)
	if n > 0 {
		s.dec.feed(s.rbuf[:n])
	}
	if n == 0 && err != nil {
		return err
	}
	return nil
}

// readPacket returns the next packet's data, acknowledging it in ack mode
// and asking again for a damaged one. handshaking makes bytes outside
// packets an error that says what the server is.
func (s *Session) readPacket(handshaking bool) ([]byte, error) {
	retries := 0
	for {
		if handshaking && s.dec.nNoise > 0 {
			// A stub sends nothing but packets and acks. Bytes outside
			// them are another server, which may echo the request back
			// as if it were a reply: once enough of them came to say
			// what the server is, or a packet follows them, give up.
			if err := s.judgeNoise(); err != nil {
				return nil, err
			}
			if _, ok := s.dec.next(); ok {
				return nil, s.noiseError()
			}
		}
		e, ok := s.dec.next()
		if !ok {
			if err := s.fill(); err != nil {
				if handshaking && s.dec.nNoise > 0 && errors.Is(err, context.DeadlineExceeded) {
					return nil, s.noiseError()
				}
				return nil, err
			}
			continue
		}
		switch {
		case e.kind != '$':
			// '+', '-' and notifications: nothing hilrun waits for. A
			// '-' would ask to resend a packet; over TCP and USB the
			// stub's checksums never fail.
			continue
		case e.err != nil:
			if s.noAck || retries == 3 {
				return nil, fmt.Errorf("damaged reply: %w", e.err)
			}
			retries++
			if _, err := s.t.Write(s.withAck('-')); err != nil {
				return nil, err
			}
			continue
		}
		if !s.noAck {
			// Sent with the next write: see end.
			s.ackOwed = true
		}
		return e.data, nil
	}
}

// judgeNoise decides, once enough has arrived, that a server sending
// bytes outside packets is not a GDB stub.
func (s *Session) judgeNoise() error {
	n := s.dec.noise
	if bytes.Contains(n, []byte("Open On-Chip Debugger")) || bytes.IndexByte(n, '\n') >= 0 || len(n) >= maxNoiseKept {
		return s.noiseError()
	}
	return nil
}

func (s *Session) noiseError() error {
	n := s.dec.noise
	if LooksLikeOpenOCDTelnet(n) {
		return unavailable(nil, "gdb %s: %s is an OpenOCD telnet port, not a GDB remote stub: use openocd: %s", s.addr, s.addr, s.addr)
	}
	if bytes.IndexByte(n, 0xff) >= 0 {
		return unavailable(nil, "gdb %s: %s is a telnet server, not a GDB remote stub (it sent %q)", s.addr, s.addr, clip(n))
	}
	return unavailable(nil, "gdb %s: %s does not speak the GDB remote protocol: it sent %q", s.addr, s.addr, clip(n))
}

func clip(b []byte) string {
	if len(b) > 80 {
		return string(b[:80]) + "..."
	}
	return string(b)
}

// reply returns the reply to the request just sent. Stop replies that
// arrive first are a stop hilrun already knows of (QEMU reports a halt it
// was asked for twice at times) unless wantStop, when one is the reply.
func (s *Session) reply(wantStop bool) ([]byte, error) {
	for {
		p, err := s.readPacket(false)
		if err != nil {
			return nil, err
		}
		if isStopReply(p) {
			s.running = false
			if p[0] == 'W' || p[0] == 'X' {
				s.exited = string(p)
			}
			if !wantStop {
				continue
			}
		}
		return p, nil
	}
}

// exchange sends a request and returns its reply.
func (s *Session) exchange(req []byte, wantStop bool) ([]byte, error) {
	if err := s.send(req); err != nil {
		return nil, err
	}
	return s.reply(wantStop)
}

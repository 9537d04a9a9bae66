// The handshake Dial does: what the stub supports (packet size, no-ack mode,
// multiprocess), how the target stands, and attaching one when the stub has
// none (the Black Magic Probe before a scan).

package gdbremote

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// handshake learns what the stub supports and how the target stands.
func (s *Session) handshake(ctx, hctx context.Context) error {
	s.t.begin(hctx, time.Time{})
	defer s.end()
	fail := func(err error, what string) error {
		if ctx.Err() != nil {
			return fmt.Errorf("gdb %s: %s: %w", s.addr, what, context.Cause(ctx))
		}
		if errors.Is(err, ErrUnavailable) {
			return err
		}
		if hctx.Err() != nil {
			err = fmt.Errorf("no answer within %v: is a GDB stub listening there?", s.opts.HandshakeTimeout)
		}
		return unavailable(err, "gdb %s: %s", s.addr, what)
	}
	stoppedByAttach := false
	if err := s.send([]byte("qSupported:swbreak+;hwbreak+;vContSupported+")); err != nil {
		return fail(err, "send qSupported")
	}
	var reply []byte
	for {
		p, err := s.readPacket(true)
		if err != nil {
			return fail(err, "handshake")
		}
		if isStopReply(p) {
			// QEMU reports the stop its attach caused before answering.
			stoppedByAttach = true
			continue
		}
		reply = p
		break
	}
	for _, f := range strings.Split(string(reply), ";") {
		name, val, _ := strings.Cut(f, "=")
		switch name {
		case "PacketSize":
			if n, err := strconv.ParseUint(val, 16, 32); err == nil {
				s.pktSize = int(min(max(n, 64), 64<<10))
			}
		case "QStartNoAckMode+":
			if err := s.send([]byte("QStartNoAckMode")); err != nil {
				return fail(err, "send QStartNoAckMode")
			}
			p, err := s.reply(false)
			if err != nil {
				return fail(err, "QStartNoAckMode")
			}
			s.noAck = string(p) == "OK"
		case "multiprocess+":
			s.multiprocess = true
		}
	}
	stop, err := s.exchange([]byte("?"), true)
	if err != nil {
		return fail(err, "ask the stop state (?)")
	}
	if len(stop) > 0 && (stop[0] == 'W' || stop[0] == 'X') {
		// No target attached: the Black Magic Probe says so until it
		// has scanned and attached one.
		if err := s.attachTarget(); err != nil {
			return fail(err, "attach a target")
		}
	}
	switch s.opts.Attach {
	case AttachRunning:
		s.wasRunning = true
	case AttachAuto:
		s.wasRunning = stoppedByAttach
	}
	if s.wasRunning && s.exited == "" {
		if err := s.resume(); err != nil {
			return fail(err, "resume the target after attaching")
		}
	}
	s.wantRunning = s.wasRunning
	return nil
}

// attachTarget scans for targets and attaches one, for a stub that has
// none attached.
func (s *Session) attachTarget() error {
	scan := s.opts.ScanCommand
	if scan == "" {
		scan = "swdp_scan"
	}
	var out string
	if scan != "-" {
		var err error
		out, err = s.monitor(scan)
		if err != nil {
			return fmt.Errorf("the stub has no target attached, and scanning for one (monitor %s) failed: %w", scan, err)
		}
	}
	n := max(s.opts.AttachTarget, 1)
	p, err := s.exchange(fmt.Appendf(nil, "vAttach;%x", n), true)
	if err != nil {
		return err
	}
	if !isStopReply(p) || p[0] == 'W' || p[0] == 'X' {
		msg := fmt.Sprintf("the stub has no target attached and refused to attach target %d (%s)", n, clip(p))
		if o := strings.TrimSpace(out); o != "" {
			msg += "; monitor " + scan + " printed: " + strings.ReplaceAll(o, "\n", "; ")
		}
		return errors.New(msg)
	}
	s.exited = ""
	return nil
}

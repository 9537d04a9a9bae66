// Monitor commands (qRcmd): QEMU's monitor or the GDB server's own, and
// whether the stub is QEMU's.

package gdbremote

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
)

// Command runs a monitor command (qRcmd) and returns what it printed. On
// QEMU these are the QEMU monitor's commands ("info status",
// "system_reset"); on OpenOCD's GDB server, OpenOCD's. A running target is
// halted for it and resumed after. A command that runs or stops the target
// behind the protocol's back (QEMU's cont and stop, OpenOCD's resume and
// halt) leaves the session's idea of the run state wrong: use Halt and
// Resume instead.
func (s *Session) Command(ctx context.Context, cmd string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out string
	err := s.stopped(ctx, "monitor "+cmd, func() error {
		var err error
		out, err = s.monitor(cmd)
		return err
	})
	return out, err
}

// maxCommandOutput bounds what one monitor command may print.
const maxCommandOutput = 1 << 20

func (s *Session) monitor(cmd string) (string, error) {
	req := append([]byte("qRcmd,"), hex.EncodeToString([]byte(cmd))...)
	if len(req) > s.pktSize {
		return "", usageError{fmt.Errorf("monitor command of %d bytes: the stub takes at most %d", len(cmd), (s.pktSize-6)/2)}
	}
	if err := s.send(req); err != nil {
		return "", err
	}
	var out []byte
	for {
		p, err := s.reply(false)
		if err != nil {
			return "", err
		}
		switch {
		case len(p) == 0:
			return "", fmt.Errorf("monitor commands (qRcmd): %w", ErrNotSupported)
		case string(p) == "OK":
			return string(out), nil
		case isErrorReply(p):
			return string(out), &TargetError{Op: fmt.Sprintf("monitor %q", cmd), Reply: string(p), Output: string(out)}
		case p[0] == 'O':
			b, err := hex.DecodeString(string(p[1:]))
			if err != nil {
				return "", fmt.Errorf("monitor output packet %q is not hex", clip(p))
			}
			if len(out)+len(b) > maxCommandOutput {
				return "", fmt.Errorf("monitor %q printed more than %d bytes", cmd, maxCommandOutput)
			}
			out = append(out, b...)
		default:
			// Some stubs answer with the output itself, hex encoded.
			b, err := hex.DecodeString(string(p))
			if err != nil {
				return "", fmt.Errorf("monitor reply %q is neither output nor OK", clip(p))
			}
			return string(append(out, b...)), nil
		}
	}
}

// isQEMU asks, once, whether the stub is QEMU's: only QEMU answers
// qqemu.sstepbits.
func (s *Session) isQEMU() (bool, error) {
	if s.qemu == 0 {
		p, err := s.exchange([]byte("qqemu.sstepbits"), false)
		if err != nil {
			return false, err
		}
		s.qemu = -1
		if bytes.HasPrefix(p, []byte("ENABLE=")) {
			s.qemu = 1
		}
	}
	return s.qemu == 1, nil
}

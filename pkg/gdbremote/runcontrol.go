// Run control: halting and resuming the target, running a request with it
// halted, and resetting it.

package gdbremote

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
)

// halt stops a running target: Ctrl-C, then its stop reply.
func (s *Session) halt() error {
	if !s.running {
		return nil
	}
	s.nextDeadline()
	if _, err := s.t.Write(s.withAck(0x03)); err != nil {
		return err
	}
	p, err := s.reply(true)
	if err != nil {
		return err
	}
	if !isStopReply(p) {
		return fmt.Errorf("the stub answered the interrupt with %q, not a stop reply", clip(p))
	}
	s.running = false
	return nil
}

// resume continues a halted target without waiting for it to stop.
func (s *Session) resume() error {
	if s.running {
		return nil
	}
	if s.exited != "" {
		return fmt.Errorf("the target's process ended (%s)", s.exited)
	}
	if s.vcont == 0 {
		p, err := s.exchange([]byte("vCont?"), false)
		if err != nil {
			return err
		}
		s.vcont = -1
		if bytes.HasPrefix(p, []byte("vCont")) && bytes.Contains(append(p, ';'), []byte(";c;")) {
			s.vcont = 1
		}
	}
	req := []byte("c")
	if s.vcont == 1 {
		req = []byte("vCont;c")
	}
	if err := s.send(req); err != nil {
		return err
	}
	s.running = true
	return nil
}

// Halt stops the target and waits until the stub reports it stopped. A
// halted target stays halted.
func (s *Session) Halt(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(ctx, "halt"); err != nil {
		return err
	}
	defer s.end()
	if err := s.halt(); err != nil {
		return s.fail(ctx, err, "halt")
	}
	s.wantRunning = false
	return nil
}

// Resume continues the target and returns without waiting for it to stop.
func (s *Session) Resume(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(ctx, "resume"); err != nil {
		return err
	}
	defer s.end()
	if s.exited != "" {
		return &TargetError{Op: "resume", Reply: "the target's process ended: " + s.exited}
	}
	if err := s.resume(); err != nil {
		return s.fail(ctx, err, "resume")
	}
	s.wantRunning = true
	return nil
}

// Running reports whether the target runs, as far as the session knows: it
// was resumed and no stop was seen since.
func (s *Session) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running
}

// LastAccessHalted reports whether the last memory access (ReadMemory,
// WriteMemory, LoadImage, VerifyImage) or Command found the target running
// and so halted it for the access and resumed it after.
func (s *Session) LastAccessHalted() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastHalted
}

// stopped runs fn with the target halted, halting it first and resuming
// it after when it ran: GDB stubs take requests only from a halted
// target.
func (s *Session) stopped(ctx context.Context, what string, fn func() error) error {
	if err := s.begin(ctx, what); err != nil {
		return err
	}
	defer s.end()
	wasRunning := s.running
	s.lastHalted = wasRunning
	if err := s.halt(); err != nil {
		return s.fail(ctx, err, what+": halt the running target first")
	}
	err := fn()
	if err != nil {
		err = s.fail(ctx, err, what)
		if s.broken != nil {
			return err
		}
	}
	if wasRunning {
		if rerr := s.resume(); rerr != nil {
			return errors.Join(err, s.fail(ctx, rerr, what+": resume the target after"))
		}
	}
	return err
}

// Reset resets the target with a monitor command (Options.ResetCommand;
// QEMU's system_reset by default) and leaves it running for mode "run",
// halted at its reset vector for "halt" and "init" (there are no init
// scripts behind a GDB stub). A stub without monitor commands gives an
// error wrapping ErrNotSupported: the protocol's own R and k packets need
// extended mode or end the session (QEMU exits on k).
func (s *Session) Reset(ctx context.Context, mode string) error {
	if mode != "run" && mode != "halt" && mode != "init" {
		return fmt.Errorf("reset mode %q: want run, halt or init", mode)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.begin(ctx, "reset "+mode); err != nil {
		return err
	}
	defer s.end()
	err := func() error {
		if err := s.halt(); err != nil {
			return err
		}
		cmd := s.opts.ResetCommand
		if cmd == "" {
			q, err := s.isQEMU()
			if err != nil {
				return err
			}
			cmd = "reset halt"
			if q {
				cmd = "system_reset"
			}
		}
		out, err := s.monitor(cmd)
		if errors.Is(err, ErrNotSupported) {
			return fmt.Errorf("reset: this stub has no monitor commands to reset with: %w", ErrNotSupported)
		}
		if te := (*TargetError)(nil); errors.As(err, &te) {
			te.Op = fmt.Sprintf("reset with monitor %q", cmd)
		}
		if err != nil {
			return err
		}
		if low := strings.ToLower(out); strings.Contains(low, "unknown command") || strings.Contains(low, "invalid command") {
			return &TargetError{Op: fmt.Sprintf("reset with monitor %q", cmd), Reply: strings.TrimSpace(out)}
		}
		// The reset may have changed what ? reports.
		if _, err := s.exchange([]byte("?"), true); err != nil {
			return err
		}
		if mode == "run" {
			return s.resume()
		}
		return nil
	}()
	if err != nil {
		return s.fail(ctx, err, "reset "+mode)
	}
	s.wantRunning = mode == "run"
	return nil
}

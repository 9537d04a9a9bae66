package repl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/elfsym"
	"github.com/hilrun/hilrun/pkg/serialx"
)

func (s *Session) describeBench() string {
	var parts []string
	for _, d := range s.opts.Seq.Devices {
		parts = append(parts, "device "+d.Name+" ("+d.Port+")")
	}
	for _, p := range s.opts.Seq.Probes {
		if _, ok := s.probes[p.Name]; ok {
			parts = append(parts, "probe "+p.Name)
		}
	}
	return "connected to " + strings.Join(parts, ", ")
}

// connState is a console that says whether its device is there:
// *serialx.Console.
type connState interface {
	Stats() serialx.Stats
}

// watchConnections reports a device that disappears and comes back; the
// consoles reconnect by themselves and the session goes on.
func (s *Session) watchConnections(ctx context.Context) {
	up := map[string]bool{}
	for name := range s.consoles {
		up[name] = true
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for name, c := range s.consoles {
			cs, ok := c.(connState)
			if !ok {
				continue
			}
			st := cs.Stats()
			switch {
			case up[name] && !st.Connected && !st.Released:
				s.say("device %s disconnected; waiting for it to come back", name)
				up[name] = false
			case !up[name] && st.Connected:
				s.say("device %s is back", name)
				up[name] = true
			}
		}
	}
}

// say prints one of hilrun's own messages above the prompt.
func (s *Session) say(format string, args ...any) {
	fmt.Fprint(s.t, s.opts.Secrets.String(fmt.Sprintf("hilrun: "+format+"\n", args...)))
}

func (s *Session) open(ctx context.Context) error {
	for _, dev := range s.opts.Seq.Devices {
		dev.Reconnect = true
		c, err := s.opts.Bench.Open(ctx, dev)
		if err != nil {
			return fmt.Errorf("%w: device %s: %w", ErrOpen, dev.Name, err)
		}
		name := dev.Name
		s.consoles[name] = c
		s.cursor[name] = c.Cursor()
		o := &output{s: s, name: name}
		s.outputs[name] = o
		s.closers = append(s.closers, c.OnReceive(func(_ time.Time, off int64, p []byte) { o.receive(off, p) }))
		if s.current == "" {
			s.current = name
		}
	}
	for _, p := range s.opts.Seq.Probes {
		if s.opts.Bench.OpenProbe == nil {
			break
		}
		d, err := s.opts.Bench.OpenProbe(ctx, p)
		if err != nil {
			s.say("probe %s: %v (memory steps on it will fail)", p.Name, err)
			continue
		}
		s.probes[p.Name] = d
		if p.ELF != "" {
			if syms, err := elfsym.LoadSymbols(s.opts.Files, p.ELF); err == nil {
				s.symbols = append(s.symbols, syms.Names()...)
			}
		}
	}
	return nil
}

// close closes the session's consoles and probes, once, and says why
// one did not close cleanly. A console that discarded output its device
// never took errs the session: a script that ends so exits with a bench
// error.
func (s *Session) close() {
	if s.closed {
		return
	}
	s.closed = true
	for _, f := range s.closers {
		f()
	}
	for _, o := range s.outputs {
		o.flush()
	}
	for _, name := range slices.Sorted(maps.Keys(s.consoles)) {
		if err := s.consoles[name].Close(); err != nil {
			s.say("device %s: %v", name, err)
			// As a run counts it: the device never got the end of
			// what the session sent.
			var lost interface{ Discarded() int }
			if errors.As(err, &lost) {
				s.errored = true
			}
		}
	}
	for _, name := range slices.Sorted(maps.Keys(s.probes)) {
		if err := s.probes[name].Close(); err != nil {
			s.say("probe %s: %v", name, err)
		}
	}
}

// pump reads the terminal. Keys go to the line editor, except Ctrl-C (which
// cancels a running step and clears the line otherwise) and, in :raw, every
// key but the escape, which goes to the device.
func (s *Session) pump() {
	buf := make([]byte, 256)
	for {
		n, err := s.opts.In.Read(buf)
		if err != nil {
			close(s.input)
			return
		}
		p := append([]byte(nil), buf[:n]...)
		s.mu.Lock()
		m, cancel, dev := s.mode, s.cancel, s.current
		s.mu.Unlock()
		switch m {
		case modeRaw:
			if i := slices.Index(p, keyEscape); i >= 0 {
				if i > 0 {
					s.consoles[dev].Write(context.Background(), p[:i])
				}
				s.mu.Lock()
				s.mode = modeLine
				close(s.rawDone)
				s.mu.Unlock()
				continue
			}
			s.consoles[dev].Write(context.Background(), p)
		case modeRunning:
			if i := slices.Index(p, keyInterrupt); i >= 0 {
				if cancel != nil {
					cancel()
				}
				p = slices.Delete(p, i, i+1)
			}
			if len(p) > 0 {
				s.input <- p
			}
		default:
			for i, b := range p {
				if b == keyInterrupt {
					p[i] = keyKillLine
				}
			}
			s.input <- p
		}
	}
}

// chanReader reads what pump passes on.
type chanReader struct {
	c    chan []byte
	rest []byte
}

func (r *chanReader) Read(p []byte) (int, error) {
	if len(r.rest) == 0 {
		b, ok := <-r.c
		if !ok {
			return 0, io.EOF
		}
		r.rest = b
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

package runner

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/stream"
)

// transcript keeps the last limit bytes a console printed, in a ring that
// never holds more, nor allocates more: its memory is bounded by limit
// however long the console prints.
type transcript struct {
	limit   int
	buf     []byte // the bytes in order until full, then a ring
	start   int    // once full, where the oldest byte is
	dropped int64
}

func (t *transcript) write(p []byte) {
	if n := min(len(p), t.limit-len(t.buf)); n > 0 {
		if len(t.buf)+n > cap(t.buf) {
			// Grow by doubling, as append would, but never past the
			// limit: append's own growth leaves capacity the ring never
			// uses (a 1 MiB ring ended up with 1.2 MB).
			grown := make([]byte, len(t.buf), min(max(2*cap(t.buf), len(t.buf)+n), t.limit))
			copy(grown, t.buf)
			t.buf = grown
		}
		t.buf = append(t.buf, p[:n]...)
		p = p[n:]
	}
	if len(p) == 0 {
		return
	}
	// Full: each new byte drops the oldest.
	t.dropped += int64(len(p))
	if len(p) >= t.limit {
		copy(t.buf, p[len(p)-t.limit:])
		t.start = 0
		return
	}
	n := copy(t.buf[t.start:], p)
	copy(t.buf, p[n:])
	t.start = (t.start + len(p)) % t.limit
}

// bytes returns a copy of what the transcript holds, oldest first.
func (t *transcript) bytes() []byte {
	out := make([]byte, 0, len(t.buf))
	return append(append(out, t.buf[t.start:]...), t.buf[:t.start]...)
}

func (r *run) openConsoles(ctx context.Context, cancel context.CancelCauseFunc) error {
	var patterns []stream.Pattern
	for _, p := range r.seq.FailOn {
		pat, err := p.Compile(r.lookup)
		if err != nil {
			return fmt.Errorf("%s: fail_on: %w", p.Pos, err)
		}
		patterns = append(patterns, pat)
	}
	for _, dev := range r.seq.Devices {
		if r.bench.Open == nil {
			return fmt.Errorf("device %s: no way to open serial consoles was given", dev.Name)
		}
		c, err := r.bench.Open(ctx, dev)
		if err != nil {
			r.notOpened(dev.Name)
			return &OpenError{Device: dev.Name, Port: dev.Port, From: portFrom(dev), Err: err}
		}
		r.consol[dev.Name] = c
		r.cursor[dev.Name] = c.Cursor()
		if o, ok := c.(OpenedConsole); ok {
			r.cursor[dev.Name] = o.OpenedAt()
		}
		name := dev.Name
		t := &transcript{limit: r.opts.TranscriptLimit}
		r.trans[name] = t
		remove := c.OnReceive(func(at time.Time, off int64, p []byte) {
			r.mu.Lock()
			t.write(p)
			r.mu.Unlock()
			// p is the console's read buffer: no copy for every chunk
			// of a bulk stream; sinks copy what they keep (see Event).
			r.emit(Event{Type: ConsoleOutput, Console: name, Data: p})
		})
		r.cleanup = append(r.cleanup, remove)
		r.watchConnection(name, c)
		if len(patterns) > 0 {
			// A fail_on hit on any console ends the current step at once,
			// even a delay, and with it the run.
			stop := c.Watch(patterns, func(h stream.Hit) {
				cancel(&failOnHit{console: name, hit: &stream.FailOnError{Pattern: h.Pattern, Offset: h.Offset, Line: h.Line}})
			})
			r.cleanup = append(r.cleanup, stop)
		}
		if r.bench.LogPaths != nil {
			if p := r.bench.LogPaths(c); p != "" {
				if r.res.Logs == nil {
					r.res.Logs = map[string]string{}
				}
				r.res.Logs[name] = p
			}
		}
	}
	for _, p := range r.seq.Probes {
		if r.bench.OpenProbe == nil {
			return fmt.Errorf("probe %s: no way to open debug probes was given", p.Name)
		}
		d, err := r.bench.OpenProbe(ctx, p)
		if err != nil {
			r.notOpened(p.Name)
			return &OpenError{Probe: p.Name, Err: err}
		}
		r.probes[p.Name] = d
	}
	return nil
}

func (r *run) closeConsoles() {
	for _, f := range r.cleanup {
		f()
	}
	r.cleanup = nil
	names := make([]string, 0, len(r.consol))
	for name := range r.consol {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		c := r.consol[name]
		var lost interface{ Discarded() int }
		if err := c.Close(); errors.As(err, &lost) {
			// The device never got the end of what the run sent.
			r.sendLoss = append(r.sendLoss, fmt.Errorf("console %s: %w", name, err))
		}
		if err := logErr(c); err != nil {
			r.logLoss = append(r.logLoss, fmt.Errorf("console %s: %w", name, err))
		}
		delete(r.consol, name)
	}
	for name, d := range r.probes {
		d.Close()
		if l, ok := d.(interface{ LogErr() error }); ok {
			if err := l.LogErr(); err != nil {
				r.logLoss = append(r.logLoss, fmt.Errorf("probe %s: %w", name, err))
			}
		}
		delete(r.probes, name)
	}
}

// awayErr asks a console (or the one it wraps) whether its device is
// away, disconnected and awaited with reconnect: true; serialx.Console
// says, through Disconnected. An expect that times out then is a bench
// error, not the device's answer.
func awayErr(c Console) error {
	for {
		if d, ok := c.(interface{ Disconnected() error }); ok {
			return d.Disconnected()
		}
		u, ok := c.(interface{ Unwrap() Console })
		if !ok {
			return nil
		}
		c = u.Unwrap()
	}
}

// logErr asks a console (or the one it wraps) what its log files lost;
// serialx.Console says, through LogErr.
func logErr(c Console) error {
	for {
		if l, ok := c.(interface{ LogErr() error }); ok {
			return l.LogErr()
		}
		u, ok := c.(interface{ Unwrap() Console })
		if !ok {
			return nil
		}
		c = u.Unwrap()
	}
}

// reportLogLoss makes a run whose console logs are incomplete a bench
// error, whatever its steps did: the record of the run is not whole. The
// run itself went on, so as not to leave the device half way through.
func (r *run) reportLogLoss() {
	var msgs []string
	for _, err := range r.sendLoss {
		msgs = append(msgs, strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	if len(r.logLoss) > 0 {
		var lost []string
		for _, err := range r.logLoss {
			lost = append(lost, strings.ReplaceAll(err.Error(), "\n", "; "))
		}
		msgs = append(msgs, strings.Join(lost, "; ")+"; the run went on regardless, but its record is incomplete")
	}
	if len(msgs) == 0 {
		return
	}
	msg := strings.Join(msgs, "; ")
	r.res.Status = worst(r.res.Status, Errored)
	if r.res.Error == "" {
		r.res.Error = msg
	} else {
		r.res.Error += "; " + msg
	}
}

func (r *run) transcripts() []Transcript {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Transcript
	for _, dev := range r.seq.Devices {
		t := r.trans[dev.Name]
		if t == nil {
			continue
		}
		out = append(out, Transcript{Console: dev.Name, Data: t.bytes(), Truncated: t.dropped})
	}
	return out
}

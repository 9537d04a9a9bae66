package sim

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"

	"go.bug.st/serial"
)

// ioTimeout only keeps a broken test from hanging; nothing here measures
// speed against it.
const ioTimeout = 10 * time.Second

// client is the test's end of the serial line: a real serial port opened on
// the board's pty slave.
type client struct {
	t    *testing.T
	port serial.Port
	buf  []byte // received and not yet consumed
	rbuf []byte
}

func dial(t *testing.T, path string) *client {
	t.Helper()
	p, err := serial.Open(path, &serial.Mode{BaudRate: 115200})
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	// A short read timeout makes Read return (0, nil) regularly, so the
	// loops below can check their deadline.
	if err := p.SetReadTimeout(20 * time.Millisecond); err != nil {
		p.Close()
		t.Fatalf("set read timeout on %s: %v", path, err)
	}
	c := &client{t: t, port: p, rbuf: make([]byte, 64<<10)}
	t.Cleanup(func() { p.Close() })
	return c
}

func (c *client) send(s string) {
	c.t.Helper()
	for p := []byte(s); len(p) > 0; {
		n, err := c.port.Write(p)
		if err != nil {
			c.t.Fatalf("send %q: %v", s, err)
		}
		p = p[n:]
	}
}

// fill reads whatever arrives within one read timeout.
func (c *client) fill() error {
	n, err := c.port.Read(c.rbuf)
	c.buf = append(c.buf, c.rbuf[:n]...)
	return err
}

// until reads until want arrives and returns everything up to and including
// it; the rest stays buffered.
func (c *client) until(want string) string {
	c.t.Helper()
	deadline := time.Now().Add(ioTimeout)
	for {
		if i := bytes.Index(c.buf, []byte(want)); i >= 0 {
			got := string(c.buf[:i+len(want)])
			c.buf = c.buf[i+len(want):]
			return got
		}
		if time.Now().After(deadline) {
			c.t.Fatalf("waiting for %q: got only %q", want, tail(c.buf))
		}
		if err := c.fill(); err != nil {
			c.t.Fatalf("waiting for %q: read: %v (got %q)", want, err, tail(c.buf))
		}
	}
}

// take reads exactly n bytes.
func (c *client) take(n int) []byte {
	c.t.Helper()
	deadline := time.Now().Add(ioTimeout)
	for len(c.buf) < n {
		if time.Now().After(deadline) {
			c.t.Fatalf("waiting for %d bytes: got only %d, ending %q", n, len(c.buf), tail(c.buf))
		}
		if err := c.fill(); err != nil {
			c.t.Fatalf("waiting for %d bytes: read: %v", n, err)
		}
	}
	got := c.buf[:n:n]
	c.buf = c.buf[n:]
	return got
}

// expect reads exactly len(want) bytes and fails unless they are want.
func (c *client) expect(want string) {
	c.t.Helper()
	if got := string(c.take(len(want))); got != want {
		c.t.Fatalf("got %q, want %q", got, want)
	}
}

// readErr reads until the port reports an error and returns it. It fails the
// test if data keeps arriving or nothing fails before the timeout.
func (c *client) readErr() error {
	c.t.Helper()
	deadline := time.Now().Add(ioTimeout)
	for time.Now().Before(deadline) {
		if err := c.fill(); err != nil {
			return err
		}
	}
	c.t.Fatalf("read did not fail within %v", ioTimeout)
	return errors.New("unreachable")
}

func tail(b []byte) []byte {
	if len(b) > 200 {
		return b[len(b)-200:]
	}
	return b
}

func startBoard(t *testing.T, opts Options) *Board {
	t.Helper()
	b := New(opts)
	if err := b.Start(); err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// boot starts a board, connects a client and consumes the banner.
func boot(t *testing.T, opts Options) (*Board, *client) {
	t.Helper()
	b := startBoard(t, opts)
	c := dial(t, b.SerialPath())
	c.expect(bannerFor(opts))
	return b, c
}

// bannerFor is what the board prints at boot with opts, prompt included.
func bannerFor(opts Options) string {
	le := leFor(opts)
	version := opts.Version
	if version == "" {
		version = DefaultVersion
	}
	return strings.Join([]string{BannerTitle, version, "boot: ok", "", promptFor(opts)}, le)
}

func leFor(opts Options) string {
	le, err := lineEndingBytes(opts.LineEnding)
	if err != nil {
		panic(err)
	}
	return string(le)
}

func promptFor(opts Options) string {
	if opts.Prompt == "" {
		return DefaultPrompt
	}
	return opts.Prompt
}

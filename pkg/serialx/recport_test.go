package serialx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.bug.st/serial"
)

// recCall is one call the console made on a recPort.
type recCall struct {
	op string        // "SetDTR(false)", "Break(250ms)", "GetModemStatusBits"
	at time.Duration // since the opener was made, so calls on successive ports compare
}

// recPort is a serial.Port that records what the console does to it: every
// call but Read, with its arguments and when it was made. Reads come from
// feed; unplug makes them fail as a vanished device's do. With noModem,
// modem-line calls fail with ENOTTY, as on a pty, and Break is accepted and
// does nothing, as a pty does.
type recPort struct {
	start   time.Time
	noModem bool
	onCall  func(p *recPort, op string) // after recording, outside mu

	mu      sync.Mutex
	calls   []recCall
	timeout time.Duration

	rx        chan []byte
	closed    chan struct{}
	closeOnce sync.Once
	gone      chan struct{}
	goneOnce  sync.Once
}

var _ serial.Port = (*recPort)(nil)

func (p *recPort) record(format string, args ...any) {
	op := fmt.Sprintf(format, args...)
	p.mu.Lock()
	p.calls = append(p.calls, recCall{op: op, at: time.Since(p.start)})
	p.mu.Unlock()
	if p.onCall != nil {
		p.onCall(p, op)
	}
}

// recorded returns the calls from the n-th on.
func (p *recPort) recorded(n int) []recCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n > len(p.calls) {
		return nil
	}
	return append([]recCall(nil), p.calls[n:]...)
}

func (p *recPort) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.calls)
}

func (p *recPort) isClosed() bool {
	select {
	case <-p.closed:
		return true
	default:
		return false
	}
}

// feed makes s the port's next read.
func (p *recPort) feed(s string) { p.rx <- []byte(s) }

// unplug makes reads fail with EIO, as a USB device's do when it goes away.
func (p *recPort) unplug() { p.goneOnce.Do(func() { close(p.gone) }) }

func (p *recPort) Read(b []byte) (int, error) {
	p.mu.Lock()
	timeout := p.timeout
	p.mu.Unlock()
	var expired <-chan time.Time
	if timeout >= 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	select {
	case <-p.closed:
		return 0, errors.New("port closed")
	case <-p.gone:
		return 0, syscall.EIO
	case data := <-p.rx:
		return copy(b, data), nil
	case <-expired:
		return 0, nil
	}
}

func (p *recPort) Write(b []byte) (int, error) {
	p.record("Write(%q)", b)
	return len(b), nil
}

func (p *recPort) modem(format string, args ...any) error {
	p.record(format, args...)
	if p.noModem {
		return syscall.ENOTTY
	}
	return nil
}

func (p *recPort) SetDTR(v bool) error { return p.modem("SetDTR(%v)", v) }
func (p *recPort) SetRTS(v bool) error { return p.modem("SetRTS(%v)", v) }

func (p *recPort) GetModemStatusBits() (*serial.ModemStatusBits, error) {
	if err := p.modem("GetModemStatusBits"); err != nil {
		return nil, err
	}
	return &serial.ModemStatusBits{}, nil
}

func (p *recPort) Break(d time.Duration) error {
	p.record("Break(%v)", d)
	time.Sleep(d) // as go.bug.st/serial does
	return nil
}

func (p *recPort) SetReadTimeout(d time.Duration) error {
	p.record("SetReadTimeout(%v)", d)
	p.mu.Lock()
	p.timeout = d
	p.mu.Unlock()
	return nil
}

func (p *recPort) SetMode(m *serial.Mode) error { p.record("SetMode"); return nil }
func (p *recPort) Drain() error                 { p.record("Drain"); return nil }
func (p *recPort) ResetInputBuffer() error      { p.record("ResetInputBuffer"); return nil }
func (p *recPort) ResetOutputBuffer() error     { p.record("ResetOutputBuffer"); return nil }

func (p *recPort) Close() error {
	p.record("Close")
	p.closeOnce.Do(func() { close(p.closed) })
	return nil
}

// recOpener is a Config.OpenPort that hands out recPorts and, at the end of
// the test, checks that the console closed every one.
type recOpener struct {
	t       *testing.T
	start   time.Time
	noModem bool
	onCall  func(p *recPort, op string)

	mu    sync.Mutex
	ports []*recPort
	modes []serial.Mode
	fail  error // while set, opening fails: the device is away
}

func newRecOpener(t *testing.T) *recOpener {
	o := &recOpener{t: t, start: time.Now()}
	t.Cleanup(func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		for i, p := range o.ports {
			if !p.isClosed() {
				t.Errorf("port %d opened through Config.OpenPort was never closed", i)
			}
		}
	})
	return o
}

func (o *recOpener) open(path string, mode *serial.Mode) (serial.Port, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.fail != nil {
		return nil, o.fail
	}
	p := &recPort{
		start: o.start, noModem: o.noModem, onCall: o.onCall, timeout: serial.NoTimeout,
		rx: make(chan []byte), closed: make(chan struct{}), gone: make(chan struct{}),
	}
	o.ports = append(o.ports, p)
	o.modes = append(o.modes, *mode)
	return p, nil
}

func (o *recOpener) setFail(err error) {
	o.mu.Lock()
	o.fail = err
	o.mu.Unlock()
}

func (o *recOpener) opened() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.ports)
}

// port returns the i-th port opened.
func (o *recOpener) port(i int) *recPort {
	o.mu.Lock()
	defer o.mu.Unlock()
	if i >= len(o.ports) {
		o.t.Fatalf("port %d was not opened (%d were)", i, len(o.ports))
	}
	return o.ports[i]
}

// console opens console "dut" on the fake port "rec0", logging to a
// temporary directory, and closes it at the end of the test. rec0 is no
// file, so no lock file is taken.
func (o *recOpener) console(cfg Config) *Console {
	o.t.Helper()
	if cfg.Path == "" {
		cfg.Path = "rec0"
	}
	cfg.OpenPort = o.open
	if cfg.LogDir == "" {
		cfg.LogDir = o.t.TempDir()
	}
	c, err := Open(context.Background(), "dut", cfg)
	if err != nil {
		o.t.Fatalf("Open: %v", err)
	}
	o.t.Cleanup(func() { c.Close() })
	return c
}

// ops returns the operations of calls.
func ops(calls []recCall) []string {
	var s []string
	for _, c := range calls {
		s = append(s, c.op)
	}
	return s
}

// events returns the console's timeline events as "event detail".
func events(t *testing.T, c *Console) []string {
	t.Helper()
	_, tl := c.LogPaths()
	f, err := os.ReadFile(tl)
	if err != nil {
		t.Fatal(err)
	}
	var evs []string
	for line := range strings.Lines(string(f)) {
		var e struct{ Dir, Event, Detail string }
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("timeline line %q: %v", line, err)
		}
		if e.Dir == "event" {
			evs = append(evs, strings.TrimSpace(e.Event+" "+e.Detail))
		}
	}
	return evs
}

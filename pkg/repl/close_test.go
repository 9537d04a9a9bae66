package repl

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

// closingConsole is a console whose Close returns err; a session with no
// lines uses nothing else of it.
type closingConsole struct {
	runner.Console
	err    error
	closed int
}

func (c *closingConsole) Cursor() int64 { return 0 }
func (c *closingConsole) OnReceive(func(time.Time, int64, []byte)) func() {
	return func() {}
}
func (c *closingConsole) Close() error { c.closed++; return c.err }

// discarded is what serialx's Close returns when the device did not take
// the end of what was written.
type discarded struct{}

func (discarded) Error() string  { return "close /dev/ttyUSB0: 7 bytes written were never sent" }
func (discarded) Discarded() int { return 7 }

// TestSessionSaysWhatCloseLost: a session's end closes its consoles once
// and says why one did not close cleanly; output the device never took
// makes a script's end a bench error, as it does a run's.
func TestSessionSaysWhatCloseLost(t *testing.T) {
	for _, tc := range []struct {
		name    string
		err     error
		errored bool
	}{
		{"discarded", discarded{}, true},
		{"other", errors.New("close /dev/ttyUSB0: input/output error"), false},
		{"clean", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &closingConsole{err: tc.err}
			seq, err := steps.Parse("session.yaml", []byte("devices:\n  dut: {port: /dev/ttyUSB0}\nsteps: []\n"), steps.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			err = Run(context.Background(), Options{
				Seq:    seq,
				Bench:  runner.Bench{Open: func(context.Context, *steps.Device) (runner.Console, error) { return c, nil }},
				In:     strings.NewReader(""),
				Out:    &out,
				Script: true,
			})
			if c.closed != 1 {
				t.Errorf("the console was closed %d times, want once", c.closed)
			}
			if got := errors.Is(err, ErrStepErrored); got != tc.errored {
				t.Errorf("Run = %v; a bench error: %v, want %v", err, got, tc.errored)
			}
			if tc.err != nil && !strings.Contains(out.String(), "hilrun: device dut: "+tc.err.Error()) {
				t.Errorf("the session did not say why dut did not close cleanly:\n%s", out.String())
			}
			if tc.err == nil && err != nil {
				t.Errorf("Run = %v after a clean close", err)
			}
		})
	}
}

// watchedConsole is a console that says whether its device is there, as
// serialx's does, until it is closed; lookedAfterClose is closed when its
// state is read after that.
type watchedConsole struct {
	closingConsole
	closed           atomic.Bool
	lookedAfterClose chan struct{}
	once             sync.Once
}

func (c *watchedConsole) Stats() serialx.Stats {
	if c.closed.Load() {
		c.once.Do(func() { close(c.lookedAfterClose) })
	}
	return serialx.Stats{Connected: !c.closed.Load()}
}

func (c *watchedConsole) Close() error {
	c.closed.Store(true)
	return c.closingConsole.Close()
}

// TestSessionEndIsNoDisconnection: the session's end closes its consoles
// after it stops watching them, so closing one is not reported as its
// device going away while another still closes.
func TestSessionEndIsNoDisconnection(t *testing.T) {
	seq, err := steps.Parse("session.yaml", []byte("devices:\n  a: {port: /dev/ttyUSB0}\n  b: {port: /dev/ttyUSB1}\nsteps: []\n"), steps.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	a := &watchedConsole{lookedAfterClose: make(chan struct{})}
	b := &slowClose{wait: a.lookedAfterClose}
	var out bytes.Buffer
	err = Run(context.Background(), Options{
		Seq: seq,
		Bench: runner.Bench{Open: func(_ context.Context, d *steps.Device) (runner.Console, error) {
			if d.Name == "a" {
				return a, nil
			}
			return b, nil
		}},
		In:     strings.NewReader(""),
		Out:    &out,
		Script: true,
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(out.String(), "disconnected") {
		t.Errorf("the session's end says a device disconnected:\n%s", out.String())
	}
}

// slowClose is a console whose Close takes a while (settling its output):
// until wait closes, or at most 2 s.
type slowClose struct {
	closingConsole
	wait <-chan struct{}
}

func (c *slowClose) Close() error {
	select {
	case <-c.wait:
	case <-time.After(2 * time.Second):
	}
	return nil
}

package serialx

import (
	"context"
	"errors"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.bug.st/serial"
)

const ms = time.Millisecond

// after returns the calls made on the console's first port since it opened.
func after(t *testing.T, o *recOpener, mark int) []string {
	t.Helper()
	return ops(o.port(0).recorded(mark))
}

func levelsOf(c *Console) lineLevels {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.levels
}

// held checks that calls[to] came at least hold after calls[from]: a lower
// bound only, since a loaded machine may always be slower.
func held(t *testing.T, calls []recCall, from, to int, hold time.Duration) {
	t.Helper()
	if to >= len(calls) {
		t.Fatalf("no call %d to measure a hold to: %q", to, ops(calls))
	}
	if got := calls[to].at - calls[from].at; got < hold {
		t.Errorf("%s came %v after %s, want at least %v", calls[to].op, got, calls[from].op, hold)
	}
}

func TestOpenPortSeam(t *testing.T) {
	t.Run("lines set at open", func(t *testing.T) {
		o := newRecOpener(t)
		o.console(Config{Devices: anyDevice, Dial: anyAddr, Baud: 9600, DTR: new(false), RTS: new(true)})
		want := []string{"SetDTR(false)", "SetRTS(true)", "SetReadTimeout(100ms)"}
		if got := after(t, o, 0); !slices.Equal(got, want) {
			t.Errorf("calls at open = %q, want %q", got, want)
		}
		if o.modes[0].BaudRate != 9600 {
			t.Errorf("opener got %+v, want 9600 baud", o.modes[0])
		}
	})
	t.Run("reads come through the opened port", func(t *testing.T) {
		o := newRecOpener(t)
		c := o.console(Config{Devices: anyDevice, Dial: anyAddr})
		go o.port(0).feed("boot ok\r\n")
		if _, err := c.Expect(timeout(t, 20*time.Second), 0, lit("boot ok"), nil); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("opener error", func(t *testing.T) {
		o := newRecOpener(t)
		o.setFail(syscall.ENOENT)
		_, err := Open(context.Background(), "dut", Config{Devices: anyDevice, Dial: anyAddr, Path: "rec0", OpenPort: o.open, NoLock: true})
		var oe *OpenError
		if !errors.As(err, &oe) || oe.Kind != NotFound || err.Error() != "open rec0: no such port" {
			t.Errorf("Open = %v, want a NotFound *OpenError", err)
		}
	})
	t.Run("opener returning no port", func(t *testing.T) {
		_, err := Open(context.Background(), "dut", Config{Devices: anyDevice, Dial: anyAddr, Path: "rec0", NoLock: true,
			OpenPort: func(string, *serial.Mode) (serial.Port, error) { return nil, nil }})
		if err == nil || err.Error() != "open rec0: the port opener returned no port" {
			t.Errorf("Open = %v", err)
		}
	})
	t.Run("flow control needs an OS port", func(t *testing.T) {
		o := newRecOpener(t)
		_, err := Open(context.Background(), "dut", Config{Devices: anyDevice, Dial: anyAddr, Path: "rec0", OpenPort: o.open, NoLock: true, FlowControl: "rtscts"})
		var oe *OpenError
		if !errors.As(err, &oe) || oe.Kind != Invalid {
			t.Fatalf("Open = %v, want an Invalid *OpenError", err)
		}
		if runtime.GOOS == "linux" && !strings.Contains(err.Error(), "*serialx.recPort is not a go.bug.st/serial port") {
			t.Errorf("error %q does not say the port is not an OS port", err)
		}
		if !o.port(0).isClosed() {
			t.Error("the port was left open")
		}
	})
	t.Run("no modem lines at open", func(t *testing.T) {
		o := newRecOpener(t)
		o.noModem = true
		_, err := Open(context.Background(), "dut", Config{Devices: anyDevice, Dial: anyAddr, Path: "rec0", OpenPort: o.open, NoLock: true, RTS: new(false)})
		if !errors.Is(err, ErrNoModemLines) || err.Error() != "open rec0: port has no modem control lines (set RTS: inappropriate ioctl for device)" {
			t.Errorf("Open = %v, want ErrNoModemLines", err)
		}
	})
}

func TestSetLines(t *testing.T) {
	tests := []struct {
		name       string
		cfg        Config
		lines      []Lines // one SetLines each
		wantCalls  []string
		wantEvents []string
	}{
		{
			name:       "assert DTR",
			lines:      []Lines{{DTR: new(true)}},
			wantCalls:  []string{"GetModemStatusBits", "SetDTR(true)"},
			wantEvents: []string{"lines dtr=1 rts=1"},
		},
		{
			name:       "negate RTS",
			lines:      []Lines{{RTS: new(false)}},
			wantCalls:  []string{"GetModemStatusBits", "SetRTS(false)"},
			wantEvents: []string{"lines dtr=1 rts=0"},
		},
		{
			name:       "both, DTR first",
			lines:      []Lines{{RTS: new(true), DTR: new(false)}},
			wantCalls:  []string{"GetModemStatusBits", "SetDTR(false)", "SetRTS(true)"},
			wantEvents: []string{"lines dtr=0 rts=1"},
		},
		{
			name:       "levels accumulate",
			lines:      []Lines{{DTR: new(false)}, {RTS: new(false)}, {DTR: new(true)}},
			wantCalls:  []string{"GetModemStatusBits", "SetDTR(false)", "GetModemStatusBits", "SetRTS(false)", "GetModemStatusBits", "SetDTR(true)"},
			wantEvents: []string{"lines dtr=0 rts=1", "lines dtr=0 rts=0", "lines dtr=1 rts=0"},
		},
		{
			name:       "levels start from the configuration",
			cfg:        Config{Devices: anyDevice, Dial: anyAddr, DTR: new(false), RTS: new(false)},
			lines:      []Lines{{RTS: new(true)}},
			wantCalls:  []string{"GetModemStatusBits", "SetRTS(true)"},
			wantEvents: []string{"lines dtr=0 rts=1"},
		},
		{
			name:  "no line is a no-op",
			lines: []Lines{{}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := newRecOpener(t)
			c := o.console(tt.cfg)
			mark := o.port(0).count()
			for _, l := range tt.lines {
				if err := c.SetLines(timeout(t, 20*time.Second), l.DTR, l.RTS); err != nil {
					t.Fatalf("SetLines(%s): %v", l, err)
				}
			}
			if got := after(t, o, mark); !slices.Equal(got, tt.wantCalls) {
				t.Errorf("calls = %q\nwant    %q", got, tt.wantCalls)
			}
			if got := events(t, c); !slices.Equal(got, tt.wantEvents) {
				t.Errorf("timeline events = %q\nwant              %q", got, tt.wantEvents)
			}
		})
	}
}

func TestPulseLines(t *testing.T) {
	tests := []struct {
		name       string
		cfg        Config
		before     Lines // set before the pulse
		pulse      Lines
		hold       time.Duration
		wantCalls  []string // after the pulse's GetModemStatusBits
		holdFrom   int      // the last call that sets the pulse's levels
		wantEvents []string
	}{
		{
			name:       "DTR from the assumed asserted",
			pulse:      Lines{DTR: new(false)},
			hold:       30 * ms,
			wantCalls:  []string{"SetDTR(false)", "SetDTR(true)"},
			wantEvents: []string{"pulse dtr=0 for 30ms", "lines dtr=0 rts=1", "lines dtr=1 rts=1"},
		},
		{
			name:       "RTS from the configured level",
			cfg:        Config{Devices: anyDevice, Dial: anyAddr, RTS: new(false)},
			pulse:      Lines{RTS: new(true)},
			hold:       20 * ms,
			wantCalls:  []string{"SetRTS(true)", "SetRTS(false)"},
			wantEvents: []string{"pulse rts=1 for 20ms", "lines dtr=1 rts=1", "lines dtr=1 rts=0"},
		},
		{
			name:      "both, back to the levels set before",
			before:    Lines{DTR: new(false)},
			pulse:     Lines{DTR: new(true), RTS: new(false)},
			hold:      25 * ms,
			wantCalls: []string{"SetDTR(true)", "SetRTS(false)", "SetDTR(false)", "SetRTS(true)"},
			holdFrom:  1,
			wantEvents: []string{
				"lines dtr=0 rts=1",
				"pulse dtr=1 rts=0 for 25ms", "lines dtr=1 rts=0", "lines dtr=0 rts=1",
			},
		},
		{
			name:       "zero hold",
			pulse:      Lines{RTS: new(false)},
			wantCalls:  []string{"SetRTS(false)", "SetRTS(true)"},
			wantEvents: []string{"pulse rts=0 for 0s", "lines dtr=1 rts=0", "lines dtr=1 rts=1"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := newRecOpener(t)
			c := o.console(tt.cfg)
			if err := c.SetLines(timeout(t, 20*time.Second), tt.before.DTR, tt.before.RTS); err != nil {
				t.Fatal(err)
			}
			mark := o.port(0).count()
			if err := c.PulseLines(timeout(t, 20*time.Second), tt.pulse.DTR, tt.pulse.RTS, tt.hold); err != nil {
				t.Fatalf("PulseLines: %v", err)
			}
			calls := o.port(0).recorded(mark)
			want := append([]string{"GetModemStatusBits"}, tt.wantCalls...)
			if got := ops(calls); !slices.Equal(got, want) {
				t.Fatalf("calls = %q\nwant    %q", got, want)
			}
			// The restore comes no earlier than hold after the pulse's
			// last set.
			from := 1 + tt.holdFrom
			held(t, calls, from, from+1, tt.hold)
			if got := events(t, c); !slices.Equal(got, tt.wantEvents) {
				t.Errorf("timeline events = %q\nwant              %q", got, tt.wantEvents)
			}
		})
	}
}

func TestPulseLinesInvalid(t *testing.T) {
	o := newRecOpener(t)
	c := o.console(Config{Devices: anyDevice, Dial: anyAddr})
	mark := o.port(0).count()
	if err := c.PulseLines(context.Background(), nil, nil, 10*ms); err == nil || err.Error() != `pulse lines of console "dut": no line to pulse` {
		t.Errorf("PulseLines without lines = %v", err)
	}
	if err := c.PulseLines(context.Background(), new(false), nil, -ms); err == nil || err.Error() != `pulse DTR of console "dut": negative hold -1ms` {
		t.Errorf("PulseLines with a negative hold = %v", err)
	}
	if got := after(t, o, mark); got != nil {
		t.Errorf("invalid pulses made calls %q", got)
	}
}

// A pulse whose context ends during the hold returns at once with the
// context's error and still restores the lines.
func TestPulseLinesCancelled(t *testing.T) {
	o := newRecOpener(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.onCall = func(p *recPort, op string) {
		if op == "SetDTR(false)" {
			cancel() // during the pulse, just before its hold
		}
	}
	c := o.console(Config{Devices: anyDevice, Dial: anyAddr})
	mark := o.port(0).count()
	const hold = time.Minute
	start := time.Now()
	err := c.PulseLines(ctx, new(false), nil, hold)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("PulseLines = %v, want context.Canceled", err)
	}
	if elapsed := time.Since(start); elapsed >= hold {
		t.Errorf("PulseLines returned after %v, at the end of its hold", elapsed)
	}
	want := `pulse DTR on rec0: stopped during the 1m0s hold: context canceled (lines restored to dtr=1)`
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err, want)
	}
	if got, want := after(t, o, mark), []string{"GetModemStatusBits", "SetDTR(false)", "SetDTR(true)"}; !slices.Equal(got, want) {
		t.Errorf("calls = %q, want %q", got, want)
	}
	evs := events(t, c)
	if len(evs) != 4 || evs[2] != "lines dtr=1 rts=1" || !strings.HasPrefix(evs[3], "modem_error pulse DTR on rec0: stopped") {
		t.Errorf("timeline events = %q", evs)
	}
}

// Close during a hold ends it at once.
func TestPulseLinesClosed(t *testing.T) {
	o := newRecOpener(t)
	var c *Console
	o.onCall = func(p *recPort, op string) {
		if op == "SetRTS(false)" {
			go c.Close()
		}
	}
	c = o.console(Config{Devices: anyDevice, Dial: anyAddr})
	const hold = time.Minute
	start := time.Now()
	err := c.PulseLines(context.Background(), nil, new(false), hold)
	if !errors.Is(err, ErrClosed) {
		t.Fatalf("PulseLines = %v, want ErrClosed", err)
	}
	if elapsed := time.Since(start); elapsed >= hold {
		t.Errorf("PulseLines returned after %v, at the end of its hold", elapsed)
	}
}

func TestBreak(t *testing.T) {
	o := newRecOpener(t)
	c := o.console(Config{Devices: anyDevice, Dial: anyAddr})
	mark := o.port(0).count()
	if err := c.Break(timeout(t, 20*time.Second), 40*ms); err != nil {
		t.Fatalf("Break: %v", err)
	}
	for _, d := range []time.Duration{0, -ms} {
		if err := c.Break(context.Background(), d); err == nil || !strings.Contains(err.Error(), "is not positive") {
			t.Errorf("Break(%v) = %v, want an error", d, err)
		}
	}
	if got, want := after(t, o, mark), []string{"GetModemStatusBits", "Break(40ms)"}; !slices.Equal(got, want) {
		t.Errorf("calls = %q, want %q", got, want)
	}
	if got, want := events(t, c), []string{"break 40ms"}; !slices.Equal(got, want) {
		t.Errorf("timeline events = %q, want %q", got, want)
	}
}

func TestResetSequence(t *testing.T) {
	type hold struct {
		from, to int // indices into wantCalls; to == len(wantCalls) is the return
		d        time.Duration
	}
	tests := []struct {
		name       string
		wantCalls  []string // after GetModemStatusBits
		holds      []hold
		wantLevels lineLevels
		wantEvents []string
	}{
		{
			name:       "arduino",
			wantCalls:  []string{"SetDTR(false)", "SetRTS(false)", "SetDTR(true)", "SetRTS(true)"},
			holds:      []hold{{1, 2, 250 * ms}, {3, 4, 50 * ms}},
			wantLevels: lineLevels{dtr: true, rts: true},
			wantEvents: []string{"reset_sequence arduino", "lines dtr=0 rts=0", "lines dtr=1 rts=1"},
		},
		{
			name:       "esp32",
			wantCalls:  []string{"SetDTR(false)", "SetRTS(true)", "SetDTR(true)", "SetRTS(false)", "SetDTR(false)"},
			holds:      []hold{{1, 2, 100 * ms}, {3, 4, 50 * ms}},
			wantLevels: lineLevels{dtr: false, rts: false},
			wantEvents: []string{"reset_sequence esp32", "lines dtr=0 rts=1", "lines dtr=1 rts=0", "lines dtr=0 rts=0"},
		},
		{
			name:       "esp32_run",
			wantCalls:  []string{"SetDTR(false)", "SetRTS(true)", "SetRTS(false)"},
			holds:      []hold{{1, 2, 100 * ms}},
			wantLevels: lineLevels{dtr: false, rts: false},
			wantEvents: []string{"reset_sequence esp32_run", "lines dtr=0 rts=1", "lines dtr=0 rts=0"},
		},
	}
	var names []string
	for _, s := range ResetSequences() {
		names = append(names, s.Name)
		if s.Description == "" || strings.Contains(s.Description, "\n") {
			t.Errorf("sequence %s: description %q is not one line", s.Name, s.Description)
		}
	}
	for _, tt := range tests {
		if i := slices.Index(names, tt.name); i >= 0 {
			names = slices.Delete(names, i, i+1)
		}
	}
	if len(names) > 0 {
		t.Errorf("sequences %q have no test case", names)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			o := newRecOpener(t)
			c := o.console(Config{Devices: anyDevice, Dial: anyAddr})
			mark := o.port(0).count()
			if err := c.ResetSequence(timeout(t, 20*time.Second), tt.name); err != nil {
				t.Fatalf("ResetSequence: %v", err)
			}
			returned := recCall{op: "return", at: time.Since(o.start)}
			calls := o.port(0).recorded(mark)
			want := append([]string{"GetModemStatusBits"}, tt.wantCalls...)
			if got := ops(calls); !slices.Equal(got, want) {
				t.Fatalf("calls = %q\nwant    %q", got, want)
			}
			calls = append(calls[1:], returned)
			for _, h := range tt.holds {
				held(t, calls, h.from, h.to, h.d)
			}
			if levelsOf(c) != tt.wantLevels {
				t.Errorf("levels after the sequence = %s, want %s", levelsOf(c), tt.wantLevels)
			}
			if got := events(t, c); !slices.Equal(got, tt.wantEvents) {
				t.Errorf("timeline events = %q\nwant              %q", got, tt.wantEvents)
			}
		})
	}
}

func TestResetSequenceUnknown(t *testing.T) {
	o := newRecOpener(t)
	c := o.console(Config{Devices: anyDevice, Dial: anyAddr})
	mark := o.port(0).count()
	err := c.ResetSequence(context.Background(), "esp8266")
	if want := `reset console "dut": unknown reset sequence "esp8266" (known: arduino, esp32, esp32_run)`; err == nil || err.Error() != want {
		t.Errorf("ResetSequence = %v\nwant %s", err, want)
	}
	if got := after(t, o, mark); got != nil {
		t.Errorf("an unknown sequence made calls %q", got)
	}
}

// A sequence cancelled while it holds the chip in reset puts the lines back
// as they were before it, so the board is not left in reset.
func TestResetSequenceCancelled(t *testing.T) {
	o := newRecOpener(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.onCall = func(p *recPort, op string) {
		if op == "SetRTS(true)" {
			cancel() // the end of esp32's first step: EN held low
		}
	}
	c := o.console(Config{Devices: anyDevice, Dial: anyAddr})
	if err := c.SetLines(context.Background(), nil, new(false)); err != nil {
		t.Fatal(err)
	}
	mark := o.port(0).count()
	err := c.ResetSequence(ctx, "esp32")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("ResetSequence = %v, want context.Canceled", err)
	}
	want := `run reset sequence esp32 on rec0: stopped during the 100ms hold of step 1: context canceled (lines restored to dtr=1 rts=0)`
	if err.Error() != want {
		t.Errorf("error = %q\nwant    %q", err, want)
	}
	wantCalls := []string{"GetModemStatusBits", "SetDTR(false)", "SetRTS(true)", "SetDTR(true)", "SetRTS(false)"}
	if got := after(t, o, mark); !slices.Equal(got, wantCalls) {
		t.Errorf("calls = %q\nwant    %q", got, wantCalls)
	}
	if levelsOf(c) != (lineLevels{dtr: true, rts: false}) {
		t.Errorf("levels = %s", levelsOf(c))
	}
}

// While the port is released, closed or gone, modem control fails as Write
// does; with Reconnect it waits for the device, and the reopened port's
// levels are the ones opening leaves.
func TestModemControlUnavailable(t *testing.T) {
	all := []struct {
		name string
		do   func(ctx context.Context, c *Console) error
	}{
		{"SetLines", func(ctx context.Context, c *Console) error { return c.SetLines(ctx, new(false), nil) }},
		{"PulseLines", func(ctx context.Context, c *Console) error { return c.PulseLines(ctx, new(false), nil, ms) }},
		{"Break", func(ctx context.Context, c *Console) error { return c.Break(ctx, ms) }},
		{"ResetSequence", func(ctx context.Context, c *Console) error { return c.ResetSequence(ctx, "esp32_run") }},
	}
	t.Run("released, then reacquired", func(t *testing.T) {
		o := newRecOpener(t)
		c := o.console(Config{Devices: anyDevice, Dial: anyAddr})
		c.listPorts = func() ([]PortInfo, error) { return nil, nil }
		if err := c.SetLines(context.Background(), new(false), nil); err != nil {
			t.Fatal(err)
		}
		if err := c.Release(context.Background()); err != nil {
			t.Fatal(err)
		}
		for _, op := range all {
			err := op.do(context.Background(), c)
			if !errors.Is(err, ErrReleased) || !strings.Contains(err.Error(), "rec0: port released for hand-over") {
				t.Errorf("%s while released = %v, want ErrReleased", op.name, err)
			}
		}
		if err := c.Reacquire(context.Background(), ReacquireOptions{}); err != nil {
			t.Fatal(err)
		}
		if levelsOf(c) != (lineLevels{dtr: true, rts: true}) {
			t.Errorf("levels after Reacquire = %s, want the assumed dtr=1 rts=1", levelsOf(c))
		}
		if err := c.PulseLines(context.Background(), nil, new(false), 0); err != nil {
			t.Fatal(err)
		}
		if got, want := ops(o.port(1).recorded(0)), []string{"SetReadTimeout(100ms)", "GetModemStatusBits", "SetRTS(false)", "SetRTS(true)"}; !slices.Equal(got, want) {
			t.Errorf("calls on the reacquired port = %q, want %q", got, want)
		}
	})
	t.Run("closed", func(t *testing.T) {
		o := newRecOpener(t)
		c := o.console(Config{Devices: anyDevice, Dial: anyAddr})
		c.Close()
		for _, op := range all {
			if err := op.do(context.Background(), c); !errors.Is(err, ErrClosed) {
				t.Errorf("%s after Close = %v, want ErrClosed", op.name, err)
			}
		}
	})
	t.Run("disconnected", func(t *testing.T) {
		o := newRecOpener(t)
		c := o.console(Config{Devices: anyDevice, Dial: anyAddr})
		o.port(0).unplug()
		eventually(t, "disconnection", func() bool { return !c.Stats().Connected })
		for _, op := range all {
			if err := op.do(context.Background(), c); !errors.Is(err, ErrDisconnected) {
				t.Errorf("%s after a disconnection = %v, want ErrDisconnected", op.name, err)
			}
		}
	})
	t.Run("waits for a reconnection", func(t *testing.T) {
		o := newRecOpener(t)
		c := o.console(Config{Devices: anyDevice, Dial: anyAddr, Reconnect: true})
		if err := c.SetLines(context.Background(), nil, new(false)); err != nil {
			t.Fatal(err)
		}
		o.setFail(syscall.ENOENT)
		o.port(0).unplug()
		eventually(t, "disconnection", func() bool { return !c.Stats().Connected })
		if err := c.SetLines(timeout(t, 20*ms), new(false), nil); !errors.Is(err, context.DeadlineExceeded) ||
			!strings.HasPrefix(err.Error(), "set DTR on rec0: waiting for the device to come back") {
			t.Errorf("SetLines while the device is away = %v", err)
		}
		done := make(chan error, 1)
		go func() { done <- c.SetLines(timeout(t, 20*time.Second), new(false), nil) }()
		o.setFail(nil)
		if err := <-done; err != nil {
			t.Fatalf("SetLines across the reconnection: %v", err)
		}
		if n := o.opened(); n != 2 {
			t.Fatalf("%d ports opened, want 2", n)
		}
		if got, want := ops(o.port(1).recorded(0)), []string{"SetReadTimeout(100ms)", "GetModemStatusBits", "SetDTR(false)"}; !slices.Equal(got, want) {
			t.Errorf("calls on the new port = %q, want %q", got, want)
		}
		// RTS, negated on the old port, is as opening left it again.
		evs := events(t, c)
		if last := evs[len(evs)-1]; last != "lines dtr=0 rts=1" {
			t.Errorf("last timeline event = %q, want lines dtr=0 rts=1 (events %q)", last, evs)
		}
	})
}

// Modem control and writes take turns: no write lands inside a pulse.
func TestModemControlWithWrites(t *testing.T) {
	o := newRecOpener(t)
	c := o.console(Config{Devices: anyDevice, Dial: anyAddr})
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for range 20 {
				if _, err := c.Write(context.Background(), []byte("x")); err != nil {
					t.Error(err)
				}
			}
		}()
		go func() {
			defer wg.Done()
			for range 10 {
				if err := c.PulseLines(context.Background(), new(false), nil, 100*time.Microsecond); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	calls := ops(o.port(0).recorded(0))
	pulses := 0
	for i, op := range calls {
		if op != "SetDTR(false)" {
			continue
		}
		pulses++
		if i+1 >= len(calls) || calls[i+1] != "SetDTR(true)" {
			t.Errorf("call %d: %s is not followed by its restore: %q", i, op, calls[i:min(len(calls), i+3)])
		}
	}
	if pulses != 30 || c.Stats().TxBytes != 60 {
		t.Errorf("%d pulses and %d bytes written, want 30 and 60", pulses, c.Stats().TxBytes)
	}
}

// On a pty, which has no modem lines, every kind of modem control fails
// with ErrNoModemLines naming the port, changes nothing, and leaves the
// console working.
func TestModemControlOnPty(t *testing.T) {
	d := newDevice(t)
	d.shell(firmware)
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr, LogDir: t.TempDir()})
	tests := []struct {
		name string
		do   func(ctx context.Context) error
		what string
	}{
		{"SetLines", func(ctx context.Context) error { return c.SetLines(ctx, new(true), nil) }, "set DTR"},
		{"SetLines both", func(ctx context.Context) error { return c.SetLines(ctx, new(false), new(true)) }, "set DTR and RTS"},
		{"PulseLines", func(ctx context.Context) error { return c.PulseLines(ctx, nil, new(false), 10*ms) }, "pulse RTS"},
		{"Break", func(ctx context.Context) error { return c.Break(ctx, 10*ms) }, "send a break"},
		{"ResetSequence", func(ctx context.Context) error { return c.ResetSequence(ctx, "esp32") }, "run reset sequence esp32"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do(timeout(t, 20*time.Second))
			if !errors.Is(err, ErrNoModemLines) {
				t.Fatalf("%s = %v, want ErrNoModemLines", tt.name, err)
			}
			want := d.path + " has no modem control lines (it is a pty or its driver has none): cannot " + tt.what
			if !strings.HasPrefix(err.Error(), want) {
				t.Errorf("error = %q\nwant it to start %q", err, want)
			}
		})
	}
	cursor, err := c.Write(timeout(t, 20*time.Second), []byte("version\n"))
	if err != nil {
		t.Fatalf("Write after modem control failed: %v", err)
	}
	if _, err := c.Expect(timeout(t, 20*time.Second), cursor, lit("hilrun-fw 1.0"), nil); err != nil {
		t.Fatalf("Expect after modem control failed: %v", err)
	}
	var errs int
	for _, e := range events(t, c) {
		if strings.HasPrefix(e, "lines ") || strings.HasPrefix(e, "pulse ") || strings.HasPrefix(e, "break ") || strings.HasPrefix(e, "reset_sequence ") {
			t.Errorf("timeline records %q, which did not happen", e)
		}
		if strings.HasPrefix(e, "modem_error "+d.path+" has no modem control lines") {
			errs++
		}
	}
	if errs != len(tests) {
		t.Errorf("timeline has %d modem_error events, want %d", errs, len(tests))
	}
}

package serialx

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.bug.st/serial"

	"github.com/hilrun/hilrun/pkg/stream"
)

func lit(s ...string) []stream.Pattern {
	var ps []stream.Pattern
	for _, x := range s {
		ps = append(ps, stream.Literal(x))
	}
	return ps
}

func firmware(line string) string {
	switch line {
	case "version":
		return "hilrun-fw 1.0\r\n> "
	case "temp":
		return "temp=23.5C hum=41%\r\n> "
	case "crash":
		return "HardFault at 0x08001234\r\n"
	case "":
		return "> "
	}
	return "unknown command: " + line + "\r\n> "
}

func TestSendExpect(t *testing.T) {
	tests := []struct {
		name      string
		send      string
		want      []stream.Pattern
		failOn    []stream.Pattern
		wantIndex int
		wantGroup []string
		wantFail  bool
	}{
		{name: "literal reply", send: "version\n", want: lit("1.0"), wantGroup: []string{"1.0"}},
		{
			name: "regexp groups", send: "temp\n",
			want:      []stream.Pattern{stream.MustRegexp(`temp=(?P<c>\d+\.\d)C hum=(\d+)%`)},
			wantGroup: []string{"temp=23.5C hum=41%", "23.5", "41"},
		},
		{name: "any of", send: "bogus\n", want: lit("1.0", "unknown command"), wantIndex: 1, wantGroup: []string{"unknown command"}},
		{name: "fail_on", send: "crash\n", want: lit("> "), failOn: lit("HardFault"), wantFail: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDevice(t)
			d.shell(firmware)
			c := d.open(Config{Devices: anyDevice, Dial: anyAddr})
			const limit = 20 * time.Second
			ctx := timeout(t, limit)
			cursor, err := c.Write(ctx, []byte(tt.send))
			if err != nil {
				t.Fatalf("Write: %v", err)
			}
			start := time.Now()
			m, err := c.Expect(ctx, cursor, tt.want, tt.failOn)
			if tt.wantFail {
				var fe *stream.FailOnError
				if !errors.As(err, &fe) {
					t.Fatalf("Expect = %v, want *stream.FailOnError", err)
				}
				if fe.Line != "HardFault at 0x08001234" {
					t.Errorf("FailOnError.Line = %q", fe.Line)
				}
				if elapsed := time.Since(start); elapsed >= limit {
					t.Errorf("fail_on returned after %v, at the timeout", elapsed)
				}
				return
			}
			if err != nil {
				t.Fatalf("Expect: %v", err)
			}
			if m.Index != tt.wantIndex || !slices.Equal(m.Groups, tt.wantGroup) {
				t.Errorf("match %d %q, want %d %q", m.Index, m.Groups, tt.wantIndex, tt.wantGroup)
			}
			if m.From != cursor || m.Start < cursor {
				t.Errorf("match from %d at %d, cursor %d", m.From, m.Start, cursor)
			}
		})
	}
}

func TestCursorSemantics(t *testing.T) {
	d := newDevice(t)
	d.shell(func(line string) string {
		if line == "version" {
			return "fw 2.0\r\nok 1\r\nok 2\r\n"
		}
		return ""
	})
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr})
	d.print("boot: fw 1.0\r\n")
	if _, err := c.Expect(timeout(t, 20*time.Second), 0, lit("boot: fw 1.0\r\n"), nil); err != nil {
		t.Fatalf("boot banner: %v", err)
	}

	cursor, err := c.Write(timeout(t, 20*time.Second), []byte("version\n"))
	if err != nil {
		t.Fatal(err)
	}
	if cursor != int64(len("boot: fw 1.0\r\n")) {
		t.Errorf("cursor = %d, want %d", cursor, len("boot: fw 1.0\r\n"))
	}
	t.Run("reply printed before the cursor does not match", func(t *testing.T) {
		_, err := c.Expect(timeout(t, 300*time.Millisecond), cursor, lit("1.0"), nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Expect(1.0) = %v, want a timeout", err)
		}
	})
	var first stream.Match
	t.Run("reply after the cursor matches", func(t *testing.T) {
		m, err := c.Expect(timeout(t, 20*time.Second), cursor, []stream.Pattern{stream.MustRegexp(`ok \d`)}, nil)
		if err != nil || m.Groups[0] != "ok 1" {
			t.Fatalf("Expect = %q, %v; want ok 1", m.Groups, err)
		}
		first = m
	})
	t.Run("standalone expect continues after the last match", func(t *testing.T) {
		m, err := c.Expect(timeout(t, 20*time.Second), first.End, []stream.Pattern{stream.MustRegexp(`ok \d`)}, nil)
		if err != nil || m.Groups[0] != "ok 2" {
			t.Fatalf("Expect = %q, %v; want ok 2", m.Groups, err)
		}
	})
}

func TestExpectStraddlingWrites(t *testing.T) {
	d := newDevice(t)
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr})
	go func() {
		d.print("fw ver")
		time.Sleep(30 * time.Millisecond)
		d.print("sion 3.1\r\n")
	}()
	m, err := c.Expect(timeout(t, 20*time.Second), 0, []stream.Pattern{stream.MustRegexp(`version (\d+)\.(\d+)`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Groups, []string{"version 3.1", "3", "1"}) || m.Start != 3 {
		t.Errorf("match %q at %d", m.Groups, m.Start)
	}
}

func TestExpectTimeout(t *testing.T) {
	d := newDevice(t)
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr})
	d.print("nothing useful\r\n")
	eventually(t, "the line to arrive", func() bool { return c.Cursor() == int64(len("nothing useful\r\n")) })
	_, err := c.Expect(timeout(t, 100*time.Millisecond), 0, lit("READY"), nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Expect = %v, want context.DeadlineExceeded", err)
	}
	if got := string(c.Tail(1, 100)); got != "nothing useful\r\n" {
		t.Errorf("Tail = %q", got)
	}
}

func TestCaptureOnConsole(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name   string
		opt    stream.CaptureOptions
		output []string // printed 20 ms apart, starting 20 ms in
		// printFirst prints the output before the capture starts, and
		// waits until the console has it: a capture bounded by time then
		// gets all of it however slow the machine.
		printFirst bool
		wantData   string
		wantReason string
	}{
		{name: "duration", opt: stream.CaptureOptions{Duration: 150 * ms}, output: []string{"a", "b"}, printFirst: true, wantData: "ab", wantReason: "duration"},
		{name: "idle", opt: stream.CaptureOptions{IdleTimeout: 150 * ms}, output: []string{"x\n", "y\n"}, printFirst: true, wantData: "x\ny\n", wantReason: "idle"},
		{name: "until", opt: stream.CaptureOptions{Until: lit("$ ")}, output: []string{"log\n", "$ ", "late"}, wantData: "log\n$ ", wantReason: "until"},
		{name: "max bytes", opt: stream.CaptureOptions{MaxBytes: 5}, output: []string{"1234", "5678"}, wantData: "12345", wantReason: "max_bytes"},
		{name: "first byte", opt: stream.CaptureOptions{Duration: 30 * ms, StartOnFirstByte: true}, output: []string{"", "", "", "hi"}, wantData: "hi", wantReason: "duration"},
		{name: "no data", opt: stream.CaptureOptions{Duration: time.Second, StartOnFirstByte: true, InitialTimeout: 60 * ms}, wantReason: "no_data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := newDevice(t)
			c := d.open(Config{Devices: anyDevice, Dial: anyAddr})
			from := c.Cursor()
			if tt.printFirst {
				d.print(strings.Join(tt.output, ""))
				n := from + int64(len(strings.Join(tt.output, "")))
				eventually(t, "the output to arrive", func() bool { return c.Cursor() == n })
			} else {
				go func() {
					for _, s := range tt.output {
						time.Sleep(20 * ms)
						if s != "" {
							d.print(s)
						}
					}
				}()
			}
			got, err := c.Capture(timeout(t, 20*time.Second), from, tt.opt)
			if err != nil {
				t.Fatalf("Capture: %v", err)
			}
			if string(got.Data) != tt.wantData || got.Reason != tt.wantReason {
				t.Errorf("Capture = %q (%s), want %q (%s)", got.Data, got.Reason, tt.wantData, tt.wantReason)
			}
		})
	}
}

func TestDisconnect(t *testing.T) {
	d := newDevice(t)
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr})
	d.print("booting\r\n")
	if _, err := c.Expect(timeout(t, 20*time.Second), 0, lit("booting"), nil); err != nil {
		t.Fatal(err)
	}
	const limit = 10 * time.Second
	time.AfterFunc(50*time.Millisecond, d.unplug)
	start := time.Now()
	_, err := c.Expect(timeout(t, limit), c.Cursor(), lit("never"), nil)
	if !errors.Is(err, ErrDisconnected) {
		t.Fatalf("Expect = %v, want ErrDisconnected", err)
	}
	if elapsed := time.Since(start); elapsed >= limit {
		t.Errorf("Expect returned after %v, at its timeout", elapsed)
	}
	if !strings.Contains(err.Error(), d.path+": device disconnected") {
		t.Errorf("error %q does not name %s", err, d.path)
	}
	if s := c.Stats(); s.Connected || !strings.Contains(s.Err, "device disconnected") {
		t.Errorf("Stats = %+v", s)
	}
	if _, err := c.Write(timeout(t, 20*time.Second), []byte("x")); !errors.Is(err, ErrDisconnected) {
		t.Errorf("Write after disconnect = %v, want ErrDisconnected", err)
	}
	// Bytes received before the disconnection are still there.
	if data, _, _ := c.Read(0, 0); string(data) != "booting\r\n" {
		t.Errorf("Read = %q", data)
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close after disconnect: %v", err)
	}
}

func TestReconnect(t *testing.T) {
	first := newDevice(t)
	var current atomic.Pointer[string]
	current.Store(&first.path)
	c := first.open(Config{Devices: anyDevice, Dial: anyAddr,
		Reconnect: true,
		Resolve: func(ctx context.Context) (string, error) {
			p := current.Load()
			if p == nil {
				return "", errors.New("device not enumerated")
			}
			return *p, nil
		},
	})
	if c.Path() != first.path {
		t.Fatalf("Path() = %s, want %s", c.Path(), first.path)
	}
	notes := make(chan string, 10)
	defer c.OnConnection(func(_ time.Time, event, detail string) { notes <- event + " " + detail })()
	first.print("run 1\r\n")
	m1, err := c.Expect(timeout(t, 20*time.Second), 0, lit("run 1\r\n"), nil)
	if err != nil {
		t.Fatal(err)
	}

	// An expect that is waiting when the device goes away keeps waiting
	// across the disconnection and sees what it prints once back.
	type result struct {
		m   stream.Match
		err error
	}
	waiting := make(chan result, 1)
	go func() {
		m, err := c.Expect(timeout(t, 10*time.Second), m1.End, lit("run 2"), nil)
		waiting <- result{m, err}
	}()
	current.Store(nil) // the device re-enumerates
	first.unplug()
	eventually(t, "disconnection", func() bool { return !c.Stats().Connected })
	if _, err := c.Write(timeout(t, 50*time.Millisecond), []byte("x")); err == nil {
		t.Errorf("Write while the device is away succeeded")
	}

	second := newDevice(t)
	current.Store(&second.path)
	eventually(t, "reconnection", func() bool { return c.Stats().Connected })
	if c.Path() != second.path {
		t.Errorf("Path() = %s, want %s", c.Path(), second.path)
	}
	// Both changes are told as they happen.
	for _, want := range []string{"disconnected " + first.path, "reconnected " + second.path} {
		select {
		case got := <-notes:
			if !strings.HasPrefix(got, want) {
				t.Errorf("told %q, want %q…", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("never told %q", want)
		}
	}
	second.print("run 2\r\n")
	r := <-waiting
	m2, err := r.m, r.err
	if err != nil {
		t.Fatalf("Expect across the reconnection: %v", err)
	}
	if m2.Start != m1.End {
		t.Errorf("offsets restarted: run 2 at %d, want %d", m2.Start, m1.End)
	}
	second.shell(func(line string) string { return "echo " + line + "\r\n" })
	cur, err := c.Write(timeout(t, 20*time.Second), []byte("hi\n"))
	if err != nil {
		t.Fatalf("Write after reconnecting: %v", err)
	}
	if _, err := c.Expect(timeout(t, 20*time.Second), cur, lit("echo hi"), nil); err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.Reconnects != 1 || s.Err != "" {
		t.Errorf("Stats = %+v", s)
	}
	if n := c.Opens(); n != 2 {
		t.Errorf("Opens() = %d after one reconnect, want 2: a fresh connection", n)
	}
}

func TestLogs(t *testing.T) {
	d := newDevice(t)
	d.shell(func(string) string { return "" })
	dir := filepath.Join(t.TempDir(), "logs")
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr, LogDir: dir})
	all := make([]byte, 256)
	for i := range all {
		all[i] = byte(i)
	}
	d.print(string(all[:100]))
	if _, err := c.Write(timeout(t, 20*time.Second), []byte("cmd \"x\"\x01\n")); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(timeout(t, 20*time.Second), []byte("\xff\\n\n")); err != nil {
		t.Fatal(err)
	}
	d.print(string(all[100:]))
	want := append(slices.Clone(all), "END"...)
	d.print("END")
	if _, err := c.Expect(timeout(t, 20*time.Second), 0, lit("END"), nil); err != nil {
		t.Fatal(err)
	}
	raw, tl := c.LogPaths()
	if raw != filepath.Join(dir, "dut.log") || tl != filepath.Join(dir, "dut.timeline.jsonl") {
		t.Errorf("LogPaths = %s, %s", raw, tl)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	got, err := os.ReadFile(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("raw log = %q\nwant      %q", got, want)
	}

	f, err := os.ReadFile(tl)
	if err != nil {
		t.Fatal(err)
	}
	type entry struct {
		T    time.Time `json:"t"`
		US   int64     `json:"us"`
		Dir  string    `json:"dir"`
		Off  *int64    `json:"off"`
		N    *int      `json:"n"`
		Data *string   `json:"data"`
		Hex  string    `json:"hex"`
	}
	var rxBytes int
	var next int64
	var txData []string
	for i, line := range strings.Split(strings.TrimSuffix(string(f), "\n"), "\n") {
		var e entry
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			t.Fatalf("timeline line %d %q: %v", i+1, line, err)
		}
		if e.T.IsZero() || e.US < 0 || e.Off == nil || e.N == nil {
			t.Errorf("timeline line %d incomplete: %s", i+1, line)
			continue
		}
		switch e.Dir {
		case "rx":
			if *e.Off != next {
				t.Errorf("timeline line %d: rx at offset %d, want %d", i+1, *e.Off, next)
			}
			next += int64(*e.N)
			rxBytes += *e.N
		case "tx":
			// Each write's bytes appear once, either as text or in hex.
			switch {
			case e.Data != nil && e.Hex == "":
				txData = append(txData, *e.Data)
			case e.Data == nil && e.Hex != "":
				b, err := hex.DecodeString(e.Hex)
				if err != nil {
					t.Errorf("timeline line %d: hex: %v", i+1, err)
				}
				txData = append(txData, string(b))
			default:
				t.Errorf("timeline line %d: a tx needs data or hex: %s", i+1, line)
			}
		default:
			t.Errorf("timeline line %d: dir %q", i+1, e.Dir)
		}
	}
	if rxBytes != len(want) {
		t.Errorf("timeline counts %d received bytes, want %d", rxBytes, len(want))
	}
	if !slices.Equal(txData, []string{"cmd \"x\"\x01\n", "\xff\\n\n"}) {
		t.Errorf("timeline tx data = %q", txData)
	}
}

func TestWatchOnConsole(t *testing.T) {
	d := newDevice(t)
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr})
	var mu sync.Mutex
	var lines []string
	cancel := c.Watch(lit("HardFault", "Guru Meditation"), func(h stream.Hit) {
		mu.Lock()
		lines = append(lines, fmt.Sprintf("%d:%s", h.Index, h.Line))
		mu.Unlock()
	})
	defer cancel()
	d.print("Guru Medi")
	time.Sleep(20 * time.Millisecond)
	d.print("tation #1\r\nok\r\nHardFault\r\nEND")
	if _, err := c.Expect(timeout(t, 20*time.Second), 0, lit("END"), nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if want := []string{"1:Guru Meditation #1", "0:HardFault"}; !slices.Equal(lines, want) {
		t.Errorf("hits = %q, want %q", lines, want)
	}
}

func TestOnReceive(t *testing.T) {
	d := newDevice(t)
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr})
	var mu sync.Mutex
	var got []byte
	var offsets []int64
	remove := c.OnReceive(func(at time.Time, off int64, p []byte) {
		mu.Lock()
		defer mu.Unlock()
		if off != int64(len(got)) {
			t.Errorf("chunk at offset %d, want %d", off, len(got))
		}
		offsets = append(offsets, off)
		got = append(got, p...)
	})
	for i := range 5 {
		d.print(fmt.Sprintf("line %d\n", i))
	}
	if _, err := c.Expect(timeout(t, 20*time.Second), 0, lit("line 4\n"), nil); err != nil {
		t.Fatal(err)
	}
	remove()
	remove()
	d.print("after\n")
	if _, err := c.Expect(timeout(t, 20*time.Second), 0, lit("after\n"), nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if string(got) != "line 0\nline 1\nline 2\nline 3\nline 4\n" {
		t.Errorf("received %q", got)
	}
}

func TestWriteLarge(t *testing.T) {
	d := newDevice(t)
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr})
	payload := bytes.Repeat([]byte("0123456789abcdef"), 64<<10/16)
	received := make(chan []byte, 1)
	go func() {
		buf := make([]byte, 0, len(payload))
		p := make([]byte, 4096)
		for len(buf) < len(payload) {
			n, err := d.master.Read(p)
			if err != nil {
				break
			}
			buf = append(buf, p[:n]...)
		}
		received <- buf
	}()
	if _, err := c.Write(timeout(t, 10*time.Second), payload); err != nil {
		t.Fatal(err)
	}
	if got := <-received; !bytes.Equal(got, payload) {
		t.Errorf("device received %d bytes, want %d identical", len(got), len(payload))
	}
	if s := c.Stats(); s.TxBytes != int64(len(payload)) {
		t.Errorf("TxBytes = %d", s.TxBytes)
	}
}

func TestWriteCancelled(t *testing.T) {
	d := newDevice(t)
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr})
	errAborted := errors.New("run aborted")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(errAborted)
	if _, err := c.Write(ctx, []byte("x")); !errors.Is(err, context.Canceled) || !errors.Is(err, errAborted) {
		t.Errorf("Write = %v, want context.Canceled and its cause", err)
	}
	if s := c.Stats(); s.TxBytes != 0 {
		t.Errorf("TxBytes = %d after a cancelled write", s.TxBytes)
	}
}

func TestCloseUnblocksExpect(t *testing.T) {
	d := newDevice(t)
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr})
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := c.Expect(timeout(t, 10*time.Second), 0, lit("never"), nil)
			errs <- err
		}()
	}
	time.Sleep(20 * time.Millisecond)
	var wg sync.WaitGroup
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := c.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}()
	}
	wg.Wait()
	for range 3 {
		if err := <-errs; !errors.Is(err, ErrClosed) {
			t.Errorf("Expect = %v, want ErrClosed", err)
		}
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close = %v", err)
	}
	if _, err := c.Write(context.Background(), []byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("Write after Close = %v, want ErrClosed", err)
	}
	if c.Stats().Connected {
		t.Error("Stats().Connected after Close")
	}
}

// Reading the console's output while the device streams and the console
// closes must be race-free (run with -race).
func TestReadRacesClose(t *testing.T) {
	for range 5 {
		d := newDevice(t)
		c := d.open(Config{Devices: anyDevice, Dial: anyAddr, BufferSize: 4096})
		stop := make(chan struct{})
		go func() {
			chunk := []byte(strings.Repeat("x", 255) + "\n")
			for {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := d.master.Write(chunk); err != nil {
					return
				}
			}
		}()
		var wg sync.WaitGroup
		for range 3 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var cur int64
				for range 200 {
					_, _, cur = c.Read(cur, 512)
					c.Tail(2, 100)
					c.Stats()
				}
			}()
		}
		time.Sleep(10 * time.Millisecond)
		if err := c.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
		wg.Wait()
		close(stop)
		d.unplug()
	}
}

func TestOpenErrors(t *testing.T) {
	yes := true
	dir := t.TempDir()
	regular := filepath.Join(dir, "not-a-tty")
	if err := os.WriteFile(regular, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		cfg      func(d *device) Config
		wantKind OpenErrorKind
		wantMsg  string // the whole message, with %s for the pty path
		wantIs   error
		wantPort bool // errors.As finds a *serial.PortError
	}{
		{
			name:     "missing port",
			cfg:      func(*device) Config { return Config{Devices: anyDevice, Dial: anyAddr, Path: "/dev/ttyHILRUN-none"} },
			wantKind: NotFound, wantMsg: "open /dev/ttyHILRUN-none: no such port", wantIs: syscall.ENOENT,
		},
		{
			name:     "not a tty",
			cfg:      func(*device) Config { return Config{Devices: anyDevice, Dial: anyAddr, Path: regular} },
			wantKind: Invalid, wantPort: true,
		},
		{
			name: "bad parity",
			cfg: func(d *device) Config {
				return Config{Devices: anyDevice, Dial: anyAddr, Path: d.path, Parity: "sometimes"}
			},
			wantKind: Invalid, wantMsg: `open %s: invalid parity "sometimes" (want none, odd, even, mark or space)`,
		},
		{
			name:     "bad data bits",
			cfg:      func(d *device) Config { return Config{Devices: anyDevice, Dial: anyAddr, Path: d.path, DataBits: 9} },
			wantKind: Invalid, wantMsg: `open %s: invalid data bits 9 (want 5, 6, 7 or 8)`,
		},
		{
			name: "bad flow control",
			cfg: func(d *device) Config {
				return Config{Devices: anyDevice, Dial: anyAddr, Path: d.path, FlowControl: "dtrdsr"}
			},
			wantKind: Invalid, wantMsg: `open %s: invalid flow control "dtrdsr" (want none, rtscts or xonxoff; hardware and software are accepted for rtscts and xonxoff)`,
		},
		{
			name:     "modem lines on a pty",
			cfg:      func(d *device) Config { return Config{Devices: anyDevice, Dial: anyAddr, Path: d.path, DTR: &yes} },
			wantKind: Invalid, wantMsg: `open %s: port has no modem control lines (set DTR: inappropriate ioctl for device)`,
			wantIs: syscall.ENOTTY,
		},
		{
			name:     "no path",
			cfg:      func(*device) Config { return Config{Devices: anyDevice, Dial: anyAddr} },
			wantKind: Invalid, wantMsg: `open serial port: console "dut" has no port path`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDevice(t)
			c, err := Open(context.Background(), "dut", tt.cfg(d))
			if c != nil {
				c.Close()
				t.Fatal("Open returned a console with its error")
			}
			var oe *OpenError
			if !errors.As(err, &oe) {
				t.Fatalf("Open = %v (%T), want *OpenError", err, err)
			}
			if oe.Kind != tt.wantKind {
				t.Errorf("Kind = %v, want %v (%v)", oe.Kind, tt.wantKind, err)
			}
			if tt.wantMsg != "" {
				if want := strings.ReplaceAll(tt.wantMsg, "%s", d.path); err.Error() != want {
					t.Errorf("error = %q\nwant    %q", err, want)
				}
			}
			if tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
				t.Errorf("error %v is not %v", err, tt.wantIs)
			}
			var pe *serial.PortError
			if got := errors.As(err, &pe); got != tt.wantPort {
				t.Errorf("errors.As(*serial.PortError) = %v, want %v (%v)", got, tt.wantPort, err)
			}
		})
	}
}

func TestOpenBusy(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores the exclusive mode that makes a port busy")
	}
	// Without lock files, which make the second open busy before it
	// reaches the port (lock_test.go), so that the exclusive mode is what
	// this tests.
	d := newDevice(t)
	d.open(Config{Devices: anyDevice, Dial: anyAddr, NoLock: true})
	_, err := Open(context.Background(), "again", Config{Devices: anyDevice, Dial: anyAddr, Path: d.path, NoLock: true})
	var oe *OpenError
	if !errors.As(err, &oe) || oe.Kind != Busy {
		t.Fatalf("second Open = %v, want a Busy *OpenError", err)
	}
	want := fmt.Sprintf("open %s: port busy (held by PID %d", d.path, os.Getpid())
	if !strings.HasPrefix(err.Error(), want) {
		t.Errorf("error = %q, want it to start with %q", err, want)
	}
}

func TestOpenResolve(t *testing.T) {
	d := newDevice(t)
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr, Resolve: func(ctx context.Context) (string, error) { return d.path, nil }})
	if c.Path() != d.path || c.Name() != "dut" {
		t.Errorf("Path() = %s, Name() = %s", c.Path(), c.Name())
	}
	_, err := Open(context.Background(), "x", Config{Devices: anyDevice, Dial: anyAddr, Resolve: func(ctx context.Context) (string, error) {
		return "", errors.New("no USB 2e8a:000a")
	}})
	if err == nil || err.Error() != `find port of console "x": no USB 2e8a:000a` {
		t.Errorf("Open = %v", err)
	}
}

func TestOpenCancelled(t *testing.T) {
	d := newDevice(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	c, err := Open(ctx, "dut", Config{Devices: anyDevice, Dial: anyAddr, Path: d.path})
	if c != nil || !errors.Is(err, context.Canceled) {
		t.Errorf("Open = %v, %v; want nil, context.Canceled", c, err)
	}
}

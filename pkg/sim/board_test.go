package sim

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestBanner(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want string
	}{
		{"defaults", Options{}, "hilrun virtual board\r\nhilrun-sim 1.0.0\r\nboot: ok\r\n\r\nsim> "},
		{"lf", Options{LineEnding: "lf"}, "hilrun virtual board\nhilrun-sim 1.0.0\nboot: ok\n\nsim> "},
		{"cr", Options{LineEnding: "cr"}, "hilrun virtual board\rhilrun-sim 1.0.0\rboot: ok\r\rsim> "},
		{"custom prompt and version", Options{Prompt: "fw# ", Version: "fw 2.3.4"}, "hilrun virtual board\r\nfw 2.3.4\r\nboot: ok\r\n\r\nfw# "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := startBoard(t, tt.opts)
			c := dial(t, b.SerialPath())
			c.expect(tt.want)
		})
	}
}

func TestStartRejectsBadLineEnding(t *testing.T) {
	b := New(Options{LineEnding: "crcr"})
	defer b.Close()
	err := b.Start()
	if err == nil || !strings.Contains(err.Error(), "crcr") {
		t.Fatalf("Start() = %v, want an error naming the line ending", err)
	}
	if p := b.PtyPath(); p != "" {
		t.Errorf("PtyPath() = %q after failed Start, want \"\"", p)
	}
}

func TestCommands(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string // exact reply before the prompt, if match is ""
		match string // regexp the reply must match
	}{
		{name: "version", input: "version\r", want: "hilrun-sim 1.0.0\r\n"},
		{name: "echo", input: "echo hello world\r", want: "hello world\r\n"},
		{name: "echo keeps inner spaces", input: "echo  a   b\r", want: "a   b\r\n"},
		{name: "echo without text", input: "echo\r", want: "\r\n"},
		{name: "echo -n", input: "echo -n adc=40\r", want: "adc=40"},
		{name: "echo -n alone", input: "echo -n\r", want: ""},
		{name: "echo -nx is text", input: "echo -nx\r", want: "-nx\r\n"},
		{name: "commands in turn", input: "echo -n adc=; echo -n 40;sleep 1; echo 95\r", want: "adc=4095\r\n"},
		{name: "empty line", input: "\r", want: ""},
		{name: "blank line", input: "   \r", want: ""},
		{name: "leading spaces", input: "  version\r", want: "hilrun-sim 1.0.0\r\n"},
		{name: "lf ends a line", input: "version\n", want: "hilrun-sim 1.0.0\r\n"},
		{name: "led on", input: "led on\r", want: "LED on\r\n"},
		{name: "led off", input: "led off\r", want: "LED off\r\n"},
		{name: "led usage", input: "led dim\r", want: "usage: led on|off\r\n"},
		{name: "status", input: "status\r", match: `^led: off\r\ncounter: \d+\r\nblink: 0\r\nuptime_ms: \d+\r\n$`},
		{name: "unknown", input: "frobnicate now\r", want: "unknown command: frobnicate (try help)\r\n"},
		{name: "peek flash", input: "peek 0x08000000\r", want: "0x08000000: 0x20010000\r\n"},
		{name: "peek 8 bits", input: "peek 0x08000002 8\r", want: "0x08000002: 0x01\r\n"},
		{name: "peek 16 bits", input: "peek 0x08000000 16\r", want: "0x08000000: 0x0000\r\n"},
		{name: "peek decimal address", input: "peek 1207959572\r", want: "0x48000014: 0x00000000\r\n"},
		{name: "peek unmapped", input: "peek 0x10000000\r", want: "bus fault at 0x10000000\r\n"},
		{name: "peek misaligned", input: "peek 0x20000002\r", want: "bus fault at 0x20000002\r\n"},
		{name: "peek bad width", input: "peek 0x20000000 12\r", want: "invalid width: 12 (want 8, 16 or 32)\r\n"},
		{name: "peek bad address", input: "peek zz\r", want: "invalid address: zz\r\n"},
		{name: "peek usage", input: "peek\r", want: "usage: peek ADDR [WIDTH]\r\n"},
		{name: "poke", input: "poke 0x20000100 0xdeadbeef\r", want: "ok\r\n"},
		{name: "poke 8 bits", input: "poke 0x20000101 0x7f 8\r", want: "ok\r\n"},
		{name: "poke unmapped", input: "poke 0x30000000 1\r", want: "bus fault at 0x30000000\r\n"},
		{name: "poke too wide", input: "poke 0x20000100 0x100 8\r", want: "value 0x100 does not fit in 8 bits\r\n"},
		{name: "poke bad value", input: "poke 0x20000100 x\r", want: "invalid value: x\r\n"},
		{name: "poke usage", input: "poke 0x20000100\r", want: "usage: poke ADDR VALUE [WIDTH]\r\n"},
		{name: "sleep", input: "sleep 20\r", want: ""},
		{name: "sleep usage", input: "sleep\r", want: "usage: sleep MS\r\n"},
		{name: "sleep bad duration", input: "sleep soon\r", want: "invalid duration: soon\r\n"},
		{name: "stream usage", input: "stream\r", want: "usage: stream N\r\n"},
		{name: "stream bad length", input: "stream -5\r", want: "invalid length: -5\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := boot(t, Options{})
			c.send(tt.input)
			got := strings.TrimSuffix(c.until("sim> "), "sim> ")
			if tt.match != "" {
				if !regexp.MustCompile(tt.match).MatchString(got) {
					t.Fatalf("reply to %q = %q, want match for %s", tt.input, got, tt.match)
				}
				return
			}
			if got != tt.want {
				t.Fatalf("reply to %q = %q, want %q", tt.input, got, tt.want)
			}
		})
	}
}

func TestHelpListsEveryCommand(t *testing.T) {
	_, c := boot(t, Options{})
	c.send("help\r")
	reply := strings.TrimSuffix(c.until("sim> "), "sim> ")
	lines := strings.Split(strings.TrimSuffix(reply, "\r\n"), "\r\n")
	listed := map[string]bool{}
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 0 {
			listed[f[0]] = true
		}
	}
	for _, cmd := range []string{"help", "version", "echo", "led", "status", "reboot", "panic", "stream", "peek", "poke", "sleep", "flaky"} {
		if !listed[cmd] {
			t.Errorf("help does not list %q; help was %q", cmd, reply)
		}
	}
	if len(lines) != len(listed) {
		t.Errorf("help has %d lines for %d commands, want one line per command", len(lines), len(listed))
	}
}

func TestLineEndings(t *testing.T) {
	tests := []struct {
		name   string
		ending string
		input  string
		want   string
	}{
		{"crlf output, cr input", "crlf", "echo hi\r", "hi\r\nsim> "},
		{"crlf output, crlf input", "crlf", "echo hi\r\n", "hi\r\nsim> "},
		{"lf output, lf input", "lf", "echo hi\n", "hi\nsim> "},
		{"cr output, crlf input", "cr", "echo hi\r\n", "hi\rsim> "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := boot(t, Options{LineEnding: tt.ending})
			c.send(tt.input)
			c.expect(tt.want)
			// A "\r\n" must end one line, not two: the next reply must
			// follow directly, with no extra prompt for an empty line.
			c.send("echo next\r")
			le := leFor(Options{LineEnding: tt.ending})
			c.expect("next" + le + "sim> ")
		})
	}
}

func TestCRLFSplitAcrossReads(t *testing.T) {
	b, c := boot(t, Options{})
	c.send("echo a\r")
	c.expect("a\r\nsim> ")
	c.send("\necho b\r")
	c.expect("b\r\nsim> ")
	var lines []string
	for _, l := range b.Received() {
		lines = append(lines, l.Line)
	}
	if got, want := strings.Join(lines, "|"), "echo a|echo b"; got != want {
		t.Fatalf("Received lines = %q, want %q", got, want)
	}
}

func TestEcho(t *testing.T) {
	tests := []struct {
		name  string
		input string
		want  string
	}{
		{"command", "echo hi\r", "echo hi\r\nhi\r\nsim> "},
		{"crlf echoes one line end", "echo hi\r\n", "echo hi\r\nhi\r\nsim> "},
		{"empty line", "\r", "\r\nsim> "},
		{"backspace", "ecx\x7fho hi\r", "ecx\b \bho hi\r\nhi\r\nsim> "},
		{"backspace on empty line", "\becho hi\r", "echo hi\r\nhi\r\nsim> "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, c := boot(t, Options{Echo: true})
			c.send(tt.input)
			c.expect(tt.want)
			c.send("version\r")
			c.expect("version\r\nhilrun-sim 1.0.0\r\nsim> ")
		})
	}
}

func TestLatencyDelaysReplies(t *testing.T) {
	const latency = 150 * time.Millisecond
	_, c := boot(t, Options{Latency: latency})
	start := time.Now()
	c.send("version\r")
	c.expect("hilrun-sim 1.0.0\r\nsim> ")
	if took := time.Since(start); took < latency {
		t.Fatalf("reply came after %v, want at least the %v latency", took, latency)
	}
}

func TestStream(t *testing.T) {
	tests := []struct {
		n      int
		ending string
	}{
		{0, "crlf"}, {1, "crlf"}, {63, "crlf"}, {64, "crlf"}, {65, "crlf"},
		{100000, "crlf"}, {5_000_000, "crlf"},
		{64, "lf"}, {100000, "lf"}, {129, "cr"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%d bytes %s", tt.n, tt.ending), func(t *testing.T) {
			opts := Options{LineEnding: tt.ending}
			le := leFor(opts)
			_, c := boot(t, opts)
			c.send("stream " + strconv.Itoa(tt.n) + "\r")
			got := c.take(tt.n)
			if want := StreamData(tt.n, tt.ending); !bytes.Equal(got, want) {
				i := firstDiff(got, want)
				t.Fatalf("stream data differs at byte %d: got %q, want %q", i, excerpt(got, i), excerpt(want, i))
			}
			c.expect(le + "sim> ")
			// Nothing may follow the prompt: the next bytes are the next
			// reply.
			c.send("echo end\r")
			c.expect("end" + le + "sim> ")
		})
	}
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

func excerpt(p []byte, i int) []byte {
	return p[max(0, i-10):min(len(p), i+10)]
}

func TestCtrlC(t *testing.T) {
	t.Run("aborts a running stream", func(t *testing.T) {
		_, c := boot(t, Options{})
		c.send("stream 1000000000\r")
		data := c.take(100000)
		c.send("\x03")
		data = append(data, strings.TrimSuffix(c.until("^C\r\nsim> "), "^C\r\nsim> ")...)
		// Everything before the ^C is the start of the stream, unbroken.
		want := make([]byte, len(data))
		if _, err := io.ReadFull(NewStreamReader(int64(len(data)), "crlf"), want); err != nil {
			t.Fatal(err)
		}
		if i := firstDiff(data, want); i != len(data) {
			t.Fatalf("data before ^C differs from the stream at byte %d: got %q, want %q", i, excerpt(data, i), excerpt(want, i))
		}
		if len(data) >= 1000000000 {
			t.Fatalf("stream ran to completion (%d bytes) instead of stopping", len(data))
		}
		c.send("echo after\r")
		c.expect("after\r\nsim> ")
	})
	t.Run("aborts sleep", func(t *testing.T) {
		_, c := boot(t, Options{})
		c.send("sleep 3600000\r")
		c.send("\x03")
		c.expect("^C\r\nsim> ")
		c.send("version\r")
		c.expect("hilrun-sim 1.0.0\r\nsim> ")
	})
	t.Run("at the prompt", func(t *testing.T) {
		_, c := boot(t, Options{LineEnding: "lf"})
		c.send("\x03")
		c.expect("^C\nsim> ")
	})
	t.Run("discards a partial line", func(t *testing.T) {
		b, c := boot(t, Options{})
		c.send("ech\x03")
		c.expect("^C\r\nsim> ")
		c.send("o x\r")
		c.expect("unknown command: o (try help)\r\nsim> ")
		if r := b.Received(); len(r) != 1 || r[0].Line != "o x" {
			t.Fatalf("Received() = %v, want only %q", r, "o x")
		}
	})
}

func TestRebootAndPanic(t *testing.T) {
	banner := bannerFor(Options{})
	tests := []struct {
		name     string
		cmd      string
		contains []string
	}{
		{"reboot", "reboot", nil},
		{"panic", "panic", []string{"Guru Meditation Error", "HardFault", "PC: 0x08000abc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, c := boot(t, Options{})
			c.send("poke 0x20000000 0x10000000\r")
			c.expect("ok\r\nsim> ")
			c.send("led on\r")
			c.expect("LED on\r\nsim> ")
			c.send(tt.cmd + "\r")
			reply := c.until(banner)
			if tt.contains == nil && reply != banner {
				t.Errorf("reply to %s = %q, want just the banner %q", tt.cmd, reply, banner)
			}
			for _, s := range tt.contains {
				if !strings.Contains(reply, s) {
					t.Errorf("reply to %s = %q, want it to contain %q", tt.cmd, reply, s)
				}
			}
			if b.LED() {
				t.Errorf("LED on after %s, want off (power-on state)", tt.cmd)
			}
			if v, err := b.Memory().Read(CounterAddr, 32); err != nil || v >= 0x10000000 {
				t.Errorf("counter after %s = %#x, %v; want it restarted from 0", tt.cmd, v, err)
			}
			c.send("version\r")
			c.expect("hilrun-sim 1.0.0\r\nsim> ")
		})
	}
}

func TestLEDThroughMemoryAndShell(t *testing.T) {
	b, c := boot(t, Options{})
	status := func() string {
		t.Helper()
		c.send("status\r")
		return c.until("sim> ")
	}
	// A bus write to ODR is what the shell's status reports.
	c.send(fmt.Sprintf("poke 0x%08x 0x%x\r", GPIOODR, 1<<LEDPin))
	c.expect("ok\r\nsim> ")
	if !b.LED() {
		t.Errorf("LED() = false after poking ODR bit %d", LEDPin)
	}
	if s := status(); !strings.HasPrefix(s, "led: on\r\n") {
		t.Errorf("status after poke = %q, want led: on", s)
	}
	if err := b.Memory().Write(GPIOBSRR, 32, 1<<(LEDPin+16)); err != nil {
		t.Fatal(err)
	}
	if s := status(); !strings.HasPrefix(s, "led: off\r\n") {
		t.Errorf("status after BSRR reset = %q, want led: off", s)
	}
	// And the shell's led command is a write the memory map sees.
	c.send("led on\r")
	c.expect("LED on\r\nsim> ")
	if v, err := b.Memory().Read(GPIOODR, 32); err != nil || v != 1<<LEDPin {
		t.Errorf("ODR after led on = %#x, %v; want %#x", v, err, 1<<LEDPin)
	}
	w := b.Memory().Writes()
	if len(w) == 0 || w[len(w)-1].Addr != GPIOBSRR || w[len(w)-1].Value != 1<<LEDPin {
		t.Errorf("last write = %+v, want BSRR set of pin %d", w, LEDPin)
	}
	c.send(fmt.Sprintf("poke 0x%08x 1\r", BlinkAddr))
	c.expect("ok\r\nsim> ")
	if s := status(); !strings.Contains(s, "blink: 1\r\n") {
		t.Errorf("status after setting the blink flag = %q, want blink: 1", s)
	}
}

func TestCounterThroughShell(t *testing.T) {
	_, c := boot(t, Options{})
	c.send("poke 0x20000000 4000000000\r")
	c.expect("ok\r\nsim> ")
	c.send("peek 0x20000000\r")
	reply := c.until("sim> ")
	m := regexp.MustCompile(`^0x20000000: 0x([0-9a-f]{8})\r\n`).FindStringSubmatch(reply)
	if m == nil {
		t.Fatalf("peek reply = %q", reply)
	}
	v, _ := strconv.ParseUint(m[1], 16, 32)
	if v < 4000000000 || v > 4000000000+uint64(ioTimeout/time.Millisecond) {
		t.Fatalf("counter = %d, want it to count on from 4000000000", v)
	}
}

func TestReceived(t *testing.T) {
	b, c := boot(t, Options{})
	hooked := make(chan RxLine, 10)
	remove := b.OnReceive(func(l RxLine) { hooked <- l })

	start := time.Now()
	inputs := []string{"echo a\r", "echo b\n", "echo c\r\n", "\r"}
	replies := []string{"a\r\nsim> ", "b\r\nsim> ", "c\r\nsim> ", "sim> "}
	var sent []time.Time
	for i, in := range inputs {
		sent = append(sent, time.Now())
		c.send(in)
		c.expect(replies[i])
	}
	end := time.Now()

	got := b.Received()
	want := []string{"echo a", "echo b", "echo c", ""}
	if len(got) != len(want) {
		t.Fatalf("Received() = %v, want lines %q", got, want)
	}
	for i, l := range got {
		if l.Line != want[i] {
			t.Errorf("line %d = %q, want %q", i, l.Line, want[i])
		}
		// Each line arrived after it was sent and before the next was.
		next := end
		if i+1 < len(sent) {
			next = sent[i+1]
		}
		if l.At.Before(sent[i]) || l.At.After(next) {
			t.Errorf("line %d At = %v, want between %v and %v", i, l.At.Sub(start), sent[i].Sub(start), next.Sub(start))
		}
	}
	for i := range want {
		select {
		case l := <-hooked:
			if l != got[i] {
				t.Errorf("hook call %d = %+v, want %+v", i, l, got[i])
			}
		default:
			t.Fatalf("hook was called %d times, want %d", i, len(want))
		}
	}

	remove()
	remove()
	c.send("echo d\r")
	c.expect("d\r\nsim> ")
	select {
	case l := <-hooked:
		t.Errorf("removed hook was called with %+v", l)
	default:
	}
}

func TestClientReopens(t *testing.T) {
	b := startBoard(t, Options{})
	c1 := dial(t, b.SerialPath())
	c1.expect(bannerFor(Options{}))
	c1.port.Close()

	// The board holds its own slave open, so a client leaving and coming
	// back is not a hang-up.
	c2 := dial(t, b.SerialPath())
	c2.send("version\r")
	c2.expect("hilrun-sim 1.0.0\r\nsim> ")
}

func TestUnplugReplug(t *testing.T) {
	link := filepath.Join(t.TempDir(), "usb-hilrun-sim-if00")
	b, c := boot(t, Options{Link: link})
	old := b.PtyPath()
	if target, err := os.Readlink(link); err != nil || target != old {
		t.Fatalf("link = %q, %v; want it pointing at %s", target, err, old)
	}

	if err := b.Unplug(); err != nil {
		t.Fatalf("Unplug: %v", err)
	}
	if err := c.readErr(); err == nil {
		t.Fatal("read after unplug returned no error")
	}
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Errorf("link still there after unplug: %v", err)
	}
	if p := b.PtyPath(); p != "" {
		t.Errorf("PtyPath() = %q while unplugged, want \"\"", p)
	}
	if err := b.Unplug(); err != nil {
		t.Errorf("second Unplug: %v", err)
	}

	if err := b.Replug(); err != nil {
		t.Fatalf("Replug: %v", err)
	}
	now := b.PtyPath()
	if now == "" || now == old {
		t.Fatalf("PtyPath() after replug = %q, want a new path (old %q)", now, old)
	}
	if target, err := os.Readlink(link); err != nil || target != now {
		t.Fatalf("link = %q, %v; want it pointing at %s", target, err, now)
	}
	if b.SerialPath() != link {
		t.Errorf("SerialPath() = %q, want the link %q", b.SerialPath(), link)
	}
	c2 := dial(t, b.SerialPath())
	c2.expect(bannerFor(Options{}))
	c2.send("version\r")
	c2.expect("hilrun-sim 1.0.0\r\nsim> ")
}

func TestReplugWhilePluggedGivesNewPath(t *testing.T) {
	b := startBoard(t, Options{})
	old := b.PtyPath()
	if err := b.Replug(); err != nil {
		t.Fatalf("Replug: %v", err)
	}
	if now := b.PtyPath(); now == "" || now == old {
		t.Fatalf("PtyPath() after replug = %q, want a new path (old %q)", now, old)
	}
	c := dial(t, b.SerialPath())
	c.expect(bannerFor(Options{}))
}

func TestUnplugDuringStream(t *testing.T) {
	b, c := boot(t, Options{})
	c.send("stream 1000000000\r")
	c.take(10000)
	// The client stops reading, so the board is blocked writing.
	done := make(chan error, 1)
	go func() { done <- b.Unplug() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Unplug: %v", err)
		}
	case <-time.After(ioTimeout):
		t.Fatal("Unplug blocked behind a stream nobody reads")
	}
}

func TestLifecycleErrors(t *testing.T) {
	tests := []struct {
		name    string
		run     func(b *Board) error
		wantErr bool
	}{
		{"unplug before start", func(b *Board) error { return b.Unplug() }, true},
		{"replug before start", func(b *Board) error { return b.Replug() }, true},
		{"close before start", func(b *Board) error { return b.Close() }, false},
		{"start twice", func(b *Board) error { b.Start(); return b.Start() }, true},
		{"start after close", func(b *Board) error { b.Close(); return b.Start() }, true},
		{"unplug after close", func(b *Board) error { b.Start(); b.Close(); return b.Unplug() }, true},
		{"replug after close", func(b *Board) error { b.Start(); b.Close(); return b.Replug() }, true},
		{"close twice", func(b *Board) error { b.Start(); b.Close(); return b.Close() }, false},
		{"close while unplugged", func(b *Board) error { b.Start(); b.Unplug(); return b.Close() }, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := New(Options{})
			defer b.Close()
			err := tt.run(b)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error: %v", err, tt.wantErr)
			}
		})
	}
}

func TestCloseEndsEverything(t *testing.T) {
	before := runtime.NumGoroutine()
	link := filepath.Join(t.TempDir(), "board")
	b := New(Options{Link: link})
	if err := b.Start(); err != nil {
		t.Fatal(err)
	}
	c := dial(t, b.SerialPath())
	c.expect(bannerFor(Options{}))
	c.send("sleep 3600000\r")

	if err := b.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if err := c.readErr(); err == nil {
		t.Fatal("read after Close returned no error")
	}
	c.port.Close()
	if _, err := os.Lstat(link); !os.IsNotExist(err) {
		t.Errorf("link still there after Close: %v", err)
	}
	if p := b.PtyPath(); p != "" {
		t.Errorf("PtyPath() = %q after Close, want \"\"", p)
	}
	deadline := time.Now().Add(ioTimeout)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			t.Fatalf("%d goroutines after Close, %d before Start", runtime.NumGoroutine(), before)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sleep sends what the line printed before it at once, so a reply can
// arrive in parts with a pause between, as from a real board.
func TestSleepSendsWhatCameBefore(t *testing.T) {
	_, c := boot(t, Options{})
	c.send("echo -n adc=40; sleep 600000; echo 95\r")
	if got := c.until("adc=40"); got != "adc=40" {
		t.Fatalf("before the pause: %q, want adc=40", got)
	}
	c.send("\x03") // the sleep would last 10 minutes
	if got := c.until("sim> "); got != "^C\r\nsim> " {
		t.Fatalf("after Ctrl-C: %q, want the rest of the line skipped", got)
	}
}

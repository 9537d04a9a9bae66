package runner_test

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// bootloader models what real consoles do and the plain device does not,
// as U-Boot does: it starts in an autoboot countdown that any key stops,
// echoes what it receives, prints a prompt, and while a long command
// prints, it polls for Ctrl-C and throws away a key that arrives meanwhile
// (the rest waits in the UART until the command is done).
type bootloader struct {
	buf  *stream.Buffer
	echo bool

	// usb makes reset re-enumerate, as a USB CDC console does: a fresh
	// connection, counted by Opens.
	usb   bool
	opens atomic.Int64

	mu       sync.Mutex
	autoboot bool
	busy     bool
	dropped  bool
	queued   []byte
	line     []byte
	writes   []string
}

var _ runner.Console = (*bootloader)(nil)

func newBootloader(echo bool) *bootloader {
	b := &bootloader{buf: stream.NewBuffer(0), echo: echo, autoboot: true}
	b.print("U-Boot 2023.01\r\nHit any key to stop autoboot:  3 ")
	return b
}

func (b *bootloader) print(s string) { b.buf.Append(time.Now(), []byte(s)) }

func (b *bootloader) Write(ctx context.Context, p []byte) (int64, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	cursor := b.buf.End()
	b.writes = append(b.writes, string(p))
	b.input(p)
	return cursor, nil
}

// input handles bytes; the caller holds mu.
func (b *bootloader) input(p []byte) {
	for i, c := range p {
		if b.busy {
			if !b.dropped {
				b.dropped = true // the Ctrl-C poll ate it
				continue
			}
			b.queued = append(b.queued, p[i:]...)
			return
		}
		if b.autoboot {
			b.autoboot = false
			b.print("\r\n=> ")
			continue
		}
		switch c {
		case 0x03:
			b.line = nil
			b.print("<INTERRUPT>\r\n=> ")
		case '\r', '\n':
			if b.echo {
				b.print("\r\n")
			}
			cmd := string(b.line)
			b.line = nil
			b.command(cmd)
		default:
			if b.echo {
				b.print(string(c))
			}
			b.line = append(b.line, c)
		}
	}
}

// command runs one command line; the caller holds mu.
func (b *bootloader) command(cmd string) {
	switch {
	case cmd == "":
		b.print("=> ")
	case cmd == "version":
		b.print("U-Boot 2023.01\r\n=> ")
	case strings.HasPrefix(cmd, "md"):
		// Prints for a while, dropping a key that arrives meanwhile.
		b.busy, b.dropped = true, false
		b.print("40200000: cafef00d\r\n")
		go func() {
			time.Sleep(200 * time.Millisecond)
			b.mu.Lock()
			defer b.mu.Unlock()
			b.print("40200004: 00000000\r\n=> ")
			b.busy = false
			q := b.queued
			b.queued = nil
			b.input(q)
		}()
	case strings.HasPrefix(cmd, "crc32 "):
		b.print("crc32 for " + strings.TrimPrefix(cmd, "crc32 ") + " ==> 1234abcd\r\n=> ")
	case cmd == "printenv x":
		// The answer, the prompt, then a log line that has nothing to do
		// with the command.
		b.print("## Error: \"x\" not defined\r\n=> x=1\r\n")
	case cmd == "sleep 1; echo woke":
		go func() {
			time.Sleep(100 * time.Millisecond)
			b.print("woke\r\n=> ")
		}()
	case cmd == "reset":
		if b.usb {
			b.opens.Add(1)
		}
		b.autoboot = true
		b.print("resetting ...\r\n\r\nU-Boot 2023.01\r\nHit any key to stop autoboot:  3 ")
	default:
		b.print("Unknown command '" + cmd + "' - try 'help'\r\n=> ")
	}
}

func (b *bootloader) Expect(ctx context.Context, from int64, want, failOn []stream.Pattern) (stream.Match, error) {
	return b.buf.Expect(ctx, from, want, failOn)
}

func (b *bootloader) Capture(ctx context.Context, from int64, opt stream.CaptureOptions) (stream.Capture, error) {
	return b.buf.Capture(ctx, from, opt)
}

func (b *bootloader) Opens() int64 { return b.opens.Load() }

func (b *bootloader) Cursor() int64                                        { return b.buf.End() }
func (b *bootloader) Tail(lines, maxBytes int) []byte                      { return b.buf.Tail(lines, maxBytes) }
func (b *bootloader) Watch(p []stream.Pattern, fn func(stream.Hit)) func() { return b.buf.Watch(p, fn) }
func (b *bootloader) OnReceive(fn func(time.Time, int64, []byte)) func()   { return func() {} }
func (b *bootloader) Close() error                                         { return nil }

func runOn(t *testing.T, src string, b *bootloader) *runner.SequenceResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return runner.Run(ctx, load(t, src), runner.Bench{
		Open: func(context.Context, *steps.Device) (runner.Console, error) { return b, nil },
	}, runner.Options{
		KeepSteps: true,
	})
}

func firstFailure(res *runner.SequenceResult) string {
	for _, s := range res.Steps {
		if s.Status != runner.Passed {
			return s.Path + ": " + s.Message
		}
	}
	return res.Error
}

// A send waits until the device is back at its prompt, so a command sent
// after one that prints for a while arrives whole; without a prompt the
// bootloader drops its first key ("rc32": Unknown command). On a fresh
// connection, before any prompt, nothing waits, so the key that stops the
// autoboot goes out at once.
func TestSendWaitsForThePrompt(t *testing.T) {
	// "crc32 0x40200000 8\n" in hex, for send_hex.
	const crcHex = "63 72 63 33 32 20 30 78 34 30 32 30 30 30 30 30 20 38 0a"
	for _, tc := range []struct {
		name, prompt, send string
		status             runner.Status
		msg                string
	}{
		{"with a prompt", `prompt: "=> "`, `send: crc32 0x40200000 8`, runner.Passed, ""},
		{"send_hex with a prompt", `prompt: "=> "`, `send_hex: "` + crcHex + `"`, runner.Passed, ""},
		{"without a prompt", ``, `send: crc32 0x40200000 8`, runner.Failed, "crc32 for"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBootloader(false)
			res := runOn(t, `
expect_timeout: 20s
devices:
  console: {`+tc.prompt+`}
steps:
  - send: ""
  - send: md.l 0x40200000 2
  - `+tc.send+`
    expect: "crc32 for 0x40200000 8 ==> 1234abcd"
    timeout: 2s
`, b)
			if res.Status != tc.status {
				t.Fatalf("status %s, want %s: %s\nwrites %q", res.Status, tc.status, firstFailure(res), b.writes)
			}
			if tc.msg != "" && !strings.Contains(firstFailure(res), tc.msg) {
				t.Errorf("failure %q lacks %q", firstFailure(res), tc.msg)
			}
		})
	}
}

// send_ctrl never waits, and neither does a send with wait_prompt: false,
// which is how the key that stops the autoboot after a reset goes out.
func TestWaitPromptFalse(t *testing.T) {
	b := newBootloader(false)
	res := runOn(t, `
expect_timeout: 20s
devices:
  console: {prompt: "=> "}
steps:
  - send: ""
    expect: "=> "
  - send: reset
    expect: "Hit any key to stop autoboot"
  - send: ""
    wait_prompt: false
    expect: "=> "
  - send_ctrl: c
  - send: version
    expect: "U-Boot 2023"
`, b)
	if res.Status != runner.Passed {
		t.Fatalf("status %s: %s\nwrites %q", res.Status, firstFailure(res), b.writes)
	}
}

// A send's expect ends at the device's next prompt: what follows it
// belongs to something else and never matches, unless until_prompt: false.
// A standalone expect ends there only with until_prompt: true.
func TestExpectEndsAtThePrompt(t *testing.T) {
	for _, tc := range []struct {
		name, steps string
		status      runner.Status
	}{
		{"a send's expect", `
  - send: printenv x
    expect: "x=1"`, runner.Failed},
		{"a standalone expect with until_prompt", `
  - send: printenv x
  - expect: "x=1"
    until_prompt: true`, runner.Failed},
		{"a standalone expect", `
  - send: printenv x
  - expect: "x=1"`, runner.Passed},
		{"the prompt itself", `
  - send: printenv x
    expect: "=> "`, runner.Passed},
		{"until_prompt: false", `
  - send: printenv x
    expect: "x=1"
    until_prompt: false`, runner.Passed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newBootloader(false)
			res := runOn(t, `
expect_timeout: 20s
devices:
  console: {prompt: "=> "}
steps:
  - send: ""
    expect: "=> "`+tc.steps, b)
			if res.Status != tc.status {
				t.Fatalf("status %s, want %s: %s", res.Status, tc.status, firstFailure(res))
			}
			if tc.status == runner.Failed {
				msg := firstFailure(res)
				if !strings.Contains(msg, "prompt") || !strings.Contains(msg, `"x=1"`) {
					t.Errorf("failure %q should say the prompt came before \"x=1\"", msg)
				}
			}
		})
	}
}

// With echo: true, a send's expect starts after the echo of its line: a
// pattern that the command itself contains does not match the echo.
func TestEchoIsSkipped(t *testing.T) {
	b := newBootloader(true)
	res := runOn(t, `
expect_timeout: 20s
devices:
  console: {prompt: "=> ", echo: true}
steps:
  - send: ""
    wait_prompt: false
    expect: "=> "
  - send: sleep 1; echo woke
    expect: woke
`, b)
	if res.Status != runner.Passed {
		t.Fatalf("status %s: %s", res.Status, firstFailure(res))
	}
	got := res.Steps[1]
	echoEnd := strings.Index(string(b.buf.Tail(100, 1<<20)), "sleep 1; echo woke\r\n") + len("sleep 1; echo woke")
	if off := got.Data["offset"].(int64); off < int64(echoEnd) {
		t.Errorf("matched at offset %d, inside the echo that ends at %d", off, echoEnd)
	}
}

// An echo that differs from what was sent (a key lost while the device
// was busy) fails the step and shows both, instead of letting a later
// expect match a stale prompt.
func TestEchoMismatchFails(t *testing.T) {
	b := newBootloader(true)
	res := runOn(t, `
expect_timeout: 20s
devices:
  console: {echo: true}
steps:
  - send: ""
  - send: md.l 0x40200000 2
  - send: crc32 0x40200000 8
  - expect: "=> "
`, b)
	if res.Status != runner.Failed {
		t.Fatalf("status %s, want failed", res.Status)
	}
	msg := firstFailure(res)
	if !strings.HasPrefix(msg, "2: ") || !strings.Contains(msg, `"rc32 0x40200000 8"`) || !strings.Contains(msg, `"crc32 0x40200000 8"`) {
		t.Errorf("failure %q should name step 2, the echo and what was sent", msg)
	}
}

// A console that reconnected (a USB device that re-enumerated on reset)
// is a fresh connection: its first send does not wait for a prompt, so it
// can stop the autoboot.
func TestFreshConnectionAfterReconnect(t *testing.T) {
	b := newBootloader(false)
	b.usb = true
	res := runOn(t, `
expect_timeout: 20s
devices:
  console: {prompt: "=> "}
steps:
  - send: ""
    expect: "=> "
  - send: reset
  - send: ""
    expect: "=> "
  - send: version
    expect: "U-Boot 2023"
`, b)
	if res.Status != runner.Passed {
		t.Fatalf("status %s: %s\nwrites %q", res.Status, firstFailure(res), b.writes)
	}
}

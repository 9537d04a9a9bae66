//go:build linux

package runner_test

import (
	"bufio"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"golang.org/x/term"

	"github.com/hilrun/hilrun/pkg/gate/devices"
	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
	"github.com/hilrun/hilrun/pkg/steps"
)

// ptyBoard is a board on the master side of a real pty: it answers each
// line it reads with reply(line), after echoing the line with echoEnd
// when that is set. What it prints before the test opens the port waits
// in the kernel, as a banner printed at power-on does.
type ptyBoard struct {
	t      *testing.T
	master *os.File
	path   string
	reply  func(line string) string
	echo   string // the line ending of the echo; "" echoes nothing

	mu    sync.Mutex
	lines []string // what the board received, line by line
}

func newPtyBoard(t *testing.T, reply func(line string) string) *ptyBoard {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pty available: %v", err)
	}
	if _, err := term.MakeRaw(int(slave.Fd())); err != nil {
		t.Fatalf("make pty raw: %v", err)
	}
	b := &ptyBoard{t: t, master: master, path: slave.Name(), reply: reply}
	t.Cleanup(func() {
		master.Close()
		slave.Close()
	})
	return b
}

// print writes s as the board's output.
func (b *ptyBoard) print(s string) {
	if _, err := b.master.Write([]byte(s)); err != nil {
		b.t.Errorf("board print %q: %v", s, err)
	}
}

// serve answers lines until the pty closes.
func (b *ptyBoard) serve() {
	go func() {
		r := bufio.NewReader(b.master)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimRight(line, "\r\n")
			b.mu.Lock()
			b.lines = append(b.lines, line)
			b.mu.Unlock()
			out := b.reply(line)
			if b.echo != "" {
				out = line + b.echo + out
			}
			if _, err := b.master.Write([]byte(out)); err != nil {
				return
			}
		}
	}()
}

func (b *ptyBoard) received() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.lines...)
}

// openedSerial is a serial console opened for one run, as the command
// line opens it.
type openedSerial struct{ *serialx.Console }

func (openedSerial) OpenedAt() int64 { return 0 }

// runOnPort runs src with every device on the serial port path.
func runOnPort(t *testing.T, src, path string) *runner.SequenceResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return runner.Run(ctx, load(t, src), runner.Bench{
		Open: func(ctx context.Context, dev *steps.Device) (runner.Console, error) {
			c, err := serialx.Open(ctx, dev.Name, serialx.Config{Path: path, NoLock: true, Devices: devices.Anywhere()})
			if err != nil {
				return nil, err
			}
			return openedSerial{c}, nil
		},
	}, runner.Options{
		KeepSteps: true,
	})
}

// firmware answers like a small shell whose prompt is "sim> ".
func firmware(line string) string {
	switch {
	case line == "":
		return "sim> "
	case line == "version":
		return "fw 1.2.3\r\nsim> "
	case strings.HasPrefix(line, "echo "):
		return strings.TrimPrefix(line, "echo ") + "\r\nsim> "
	}
	return "unknown command: " + line + "\r\nsim> "
}

const banner = "boot: ok\r\nfw 1.2.3\r\nsim> "

// What a board printed before the port was opened is not the reply to
// the first send, with a prompt declared or not: the reply, and the
// prompt that ends it, are looked for only after it.
func TestBannerIsNotTheReply(t *testing.T) {
	for _, tc := range []struct {
		name, devices, steps string
		status               runner.Status
	}{
		{"stale banner line", "", "  - send: version\n    expect: \"boot: ok\"\n", runner.Failed},
		{"stale banner line, prompt", `devices: {dut: {prompt: "sim> "}}`, "  - send: version\n    expect: \"boot: ok\"\n", runner.Failed},
		{"honest", "", "  - send: version\n    expect: {regex: 'fw (\\d+\\.\\d+\\.\\d+)'}\n", runner.Passed},
		{"honest, prompt", `devices: {dut: {prompt: "sim> "}}`, "  - send: version\n    expect: {regex: 'fw (\\d+\\.\\d+\\.\\d+)'}\n  - send: echo hi\n    expect: hi\n  - send: echo there\n    expect: there\n", runner.Passed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newPtyBoard(t, firmware)
			b.print(banner)
			b.serve()
			res := runOnPort(t, "expect_timeout: 5s\n"+tc.devices+"\nsteps:\n"+tc.steps, b.path)
			if res.Status != tc.status {
				t.Fatalf("status %s, want %s: %s", res.Status, tc.status, firstFailure(res))
			}
			for _, s := range res.Steps {
				if off, ok := s.Data["offset"].(int64); ok && off < int64(len(banner)) {
					t.Errorf("step %s matched at offset %d, inside the banner (%d bytes)", s.Path, off, len(banner))
				}
			}
		})
	}
}

// With echo: true, the echoed line and its whole line ending are not part
// of the reply, whichever line ending the device echoes.
func TestEchoLineStrippedWhole(t *testing.T) {
	for _, tc := range []struct{ name, echo string }{
		{"crlf", "\r\n"},
		{"lfcr", "\n\r"},
		{"crcrlf", "\r\r\n"},
		{"lf", "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newPtyBoard(t, func(line string) string {
				return strings.Replace(firmware(line), "\r\n", tc.echo, 1)
			})
			b.echo = tc.echo
			b.serve()
			res := runOnPort(t, `
expect_timeout: 5s
devices: {dut: {prompt: "sim> ", echo: true}}
steps:
  - send: echo hello
    expect: {regex: '^hello'}
  - send: echo there
  - id: cap
    capture: {until: "sim> "}
  - send: ""
    expect: "sim> "
  - send: version
    expect: {regex: '^fw \d'}
`, b.path)
			if res.Status != runner.Passed {
				t.Fatalf("status %s: %s", res.Status, firstFailure(res))
			}
			for _, s := range res.Steps {
				if s.Kind == "capture" {
					if text := s.Data["text"].(string); !strings.HasPrefix(text, "there") {
						t.Errorf("the capture after an echoed send begins %q, want the reply", text)
					}
				}
			}
		})
	}
}

// A prompt that arrives without a line break before it does not count,
// and the failure says so and shows where the last line began.
func TestPromptNotAtLineStart(t *testing.T) {
	b := newPtyBoard(t, func(line string) string {
		if line == "first" {
			return "done\r\n> "
		}
		return "ready> "
	})
	b.serve()
	res := runOnPort(t, `
expect_timeout: 2s
devices: {dut: {prompt: "> "}}
steps:
  - send: first
    wait_prompt: false
    expect: done
  - send: second
    wait_prompt: false
  - send: third
`, b.path)
	if res.Status != runner.Failed {
		t.Fatalf("status %s, want failed: %s", res.Status, firstFailure(res))
	}
	msg := firstFailure(res)
	for _, want := range []string{"counts only at the start of a line", `began 7 bytes before it: "\n> ready> "`} {
		if !strings.Contains(msg, want) {
			t.Errorf("failure %q does not say %q", msg, want)
		}
	}
}

// The console sync: a device with a prompt that printed nothing yet is
// asked for it with the line ending; wait_prompt: false sends at once;
// a device without a prompt is sent only what the steps send.
func TestConsoleSync(t *testing.T) {
	for _, tc := range []struct {
		name, devices, steps string
		want                 []string // the lines the board received
	}{
		{"asks for the prompt", `{dut: {prompt: "sim> "}}`, "  - send: version\n    expect: fw 1.2.3\n", []string{"", "version"}},
		{"wait_prompt: false", `{dut: {prompt: "sim> "}}`, "  - send: version\n    wait_prompt: false\n    expect: fw 1.2.3\n", []string{"version"}},
		{"no prompt", `{dut: {}}`, "  - send: version\n    expect: fw 1.2.3\n  - send: echo x\n    expect: x\n", []string{"version", "echo x"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := newPtyBoard(t, firmware)
			b.serve()
			res := runOnPort(t, "expect_timeout: 5s\ndevices: "+tc.devices+"\nsteps:\n"+tc.steps, b.path)
			if res.Status != runner.Passed {
				t.Fatalf("status %s: %s", res.Status, firstFailure(res))
			}
			if got := b.received(); strings.Join(got, "|") != strings.Join(tc.want, "|") {
				t.Errorf("the board received %q, want %q", got, tc.want)
			}
		})
	}
}

// A device that never shows its prompt fails the sync within its
// sync_timeout, saying so, and nothing is sent.
func TestConsoleSyncTimeout(t *testing.T) {
	b := newPtyBoard(t, func(string) string { return "" })
	b.serve()
	res := runOnPort(t, `
expect_timeout: 30s
devices: {dut: {prompt: "sim> ", sync_timeout: 2s}}
steps:
  - send: version
`, b.path)
	if res.Status != runner.Failed {
		t.Fatalf("status %s, want failed: %s", res.Status, firstFailure(res))
	}
	if msg := firstFailure(res); !strings.Contains(msg, "sync_timeout of 2s") {
		t.Errorf("failure %q does not name the sync_timeout", msg)
	}
	if got := b.received(); len(got) != 1 || got[0] != "" {
		t.Errorf("the board received %q, want only the sync's line ending", got)
	}
}

// A board still booting when the port opens: the sync's line ending is
// answered by the rest of the banner and a prompt, and a moment later by
// a second prompt. The sync ends only once the line has been quiet, so
// the first send's reply is its own.
func TestConsoleSyncWaitsForQuiet(t *testing.T) {
	var b *ptyBoard
	first := true
	b = newPtyBoard(t, func(line string) string {
		if first && line == "" {
			first = false
			go func() {
				time.Sleep(200 * time.Millisecond) // still booting
				b.print(firmware(line))
			}()
			return "boot: ok\r\nsim> "
		}
		return firmware(line)
	})
	b.print("booting...\r\n")
	b.serve()
	res := runOnPort(t, `
expect_timeout: 5s
devices: {dut: {prompt: "sim> "}}
steps:
  - send: version
    expect: fw 1.2.3
`, b.path)
	if res.Status != runner.Passed {
		t.Fatalf("status %s: %s", res.Status, firstFailure(res))
	}
}

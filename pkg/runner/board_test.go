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
	return runner.Run(ctx, load(t, src), runner.Options{KeepSteps: true,
		Open: func(ctx context.Context, dev *steps.Device) (runner.Console, error) {
			c, err := serialx.Open(ctx, dev.Name, serialx.Config{Path: path, NoLock: true})
			if err != nil {
				return nil, err
			}
			return openedSerial{c}, nil
		},
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

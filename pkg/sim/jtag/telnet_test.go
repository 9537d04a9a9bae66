package jtag

import (
	"bytes"
	"errors"
	"flag"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var recordTelnet = flag.Bool("record-telnet", false,
	"rewrite testdata/telnet from a session with the real openocd")

const telnetDir = "testdata/telnet"

// telnetIAC is the option negotiation OpenOCD's telnet server opens with:
// WILL SUPPRESS-GO-AHEAD, WILL ECHO, DO SUPPRESS-GO-AHEAD, DONT ECHO.
const telnetIAC = "\xff\xfb\x03\xff\xfb\x01\xff\xfd\x03\xff\xfe\x01"

// telnetCommands are the recordings of one command each: the bytes OpenOCD
// sent from the command line's echo to the next prompt.
var telnetCommands = []struct {
	file, line string
	wait       bool // inject a WAIT first
}{
	{file: "mdw.bin", line: "mdw 0x20000004"},
	{file: "mdw_multi.bin", line: "mdw 0x20000000 4"},
	{file: "mww.bin", line: "mww 0x48000014 0x20"},
	{file: "error_read.bin", line: "mdw 0x30000000"},
	{file: "error_write.bin", line: "mww 0x30000000 1"},
	{file: "wait_info.bin", line: "mdw 0x20000004", wait: true},
	{file: "unknown_command.bin", line: "foo"},
	{file: "load_image.bin", line: "load_image image.bin 0x20001000 bin"},
}

// TestTelnetRecordings checks the recorded telnet streams that telnet
// clients elsewhere in hilrun are tested against; with -record-telnet it
// first records them again from a real OpenOCD.
func TestTelnetRecordings(t *testing.T) {
	if *recordTelnet {
		recordTelnetStreams(t)
	}
	read := func(t *testing.T, name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(telnetDir, name))
		if err != nil {
			t.Fatalf("%v (record with: go test ./pkg/sim/jtag -run TestTelnetRecordings -record-telnet)", err)
		}
		return string(b)
	}

	t.Run("connect.bin", func(t *testing.T) {
		s := read(t, "connect.bin")
		if !strings.HasPrefix(s, telnetIAC) || !strings.Contains(s, "Open On-Chip Debugger\r\n") || !strings.HasSuffix(s, prompt) {
			t.Errorf("connect.bin = %q, want IAC negotiation, banner, prompt", s)
		}
	})
	for _, c := range telnetCommands {
		t.Run(c.file, func(t *testing.T) {
			s := read(t, c.file)
			if !strings.HasPrefix(s, c.line+"\r\n") || !strings.HasSuffix(s, prompt) {
				t.Errorf("%s = %q, want the echoed %q, output, prompt", c.file, s, c.line)
			}
		})
	}
	t.Run("async_log.bin", func(t *testing.T) {
		s := read(t, "async_log.bin")
		// The partial line, erased, the log lines, the prompt and the
		// partial line again, then the rest of the command.
		for _, w := range []string{"mdw 0x2000\b", "JTAG-DP STICKY ERROR\r\n> mdw 0x2000", "Failed to read memory at 0x30000000\r\n> mdw 0x2000"} {
			if !strings.Contains(s, w) {
				t.Errorf("async_log.bin lacks %q: %q", w, s)
			}
		}
		if !strings.HasSuffix(s, prompt) {
			t.Errorf("async_log.bin does not end with the prompt: %q", s)
		}
	})
	t.Run("shutdown.bin", func(t *testing.T) {
		s := read(t, "shutdown.bin")
		if !strings.HasPrefix(s, "shutdown\r\n") || !strings.Contains(s, "shutdown command invoked") {
			t.Errorf("shutdown.bin = %q", s)
		}
	})
}

func recordTelnetStreams(t *testing.T) {
	b := startBoard(t)
	if err := os.MkdirAll(telnetDir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(telnetDir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("connect.bin", b.tn.banner)

	img := make([]byte, 64)
	for i := range img {
		img[i] = byte(i)
	}
	if err := os.WriteFile(filepath.Join(b.ocd.dir, "image.bin"), img, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range telnetCommands {
		if c.wait {
			b.srv.InjectWait(1)
		}
		write(c.file, b.tn.raw(c.line))
	}

	// A log line from another connection's command reaches this one while
	// its prompt shows a partly typed line.
	a := b.tn
	partial := "mdw 0x2000"
	a.c.Write([]byte(partial))
	var got []byte
	got = readUntil(t, a, func(p []byte) bool { return bytes.HasSuffix(p, []byte(partial)) })
	other, err := b.ocd.dial(t)
	if err != nil {
		t.Fatal(err)
	}
	other.raw("mdw 0x30000000")
	// Each log line erases the prompt and the partial line with
	// backspaces, prints itself and redraws them. OpenOCD is single
	// threaded: once the other command's prompt has come, everything it
	// logged has been written to this connection too.
	got = append(got, readIdle(t, a, 300*time.Millisecond)...)
	a.c.Write([]byte("0004\n"))
	got = append(got, a.readPrompt()...)
	write("async_log.bin", got)

	a.c.Write([]byte("shutdown\n"))
	write("shutdown.bin", readUntil(t, a, nil))
}

// readUntil reads from tn until done reports true for everything read, or,
// with done nil, until the server closes the connection.
func readUntil(t *testing.T, tn *telnet, done func([]byte) bool) []byte {
	t.Helper()
	tn.c.SetReadDeadline(time.Now().Add(ioTimeout))
	got := append([]byte(nil), tn.buf...)
	tn.buf = nil
	p := make([]byte, 4096)
	for done == nil || !done(got) {
		n, err := tn.c.Read(p)
		got = append(got, p[:n]...)
		if err != nil {
			if done == nil {
				return got
			}
			t.Fatalf("telnet: read: %v (have %q)", err, got)
		}
	}
	return got
}

// readIdle reads from tn until nothing arrives for quiet.
func readIdle(t *testing.T, tn *telnet, quiet time.Duration) []byte {
	t.Helper()
	got := append([]byte(nil), tn.buf...)
	tn.buf = nil
	p := make([]byte, 4096)
	for {
		tn.c.SetReadDeadline(time.Now().Add(quiet))
		n, err := tn.c.Read(p)
		got = append(got, p[:n]...)
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				return got
			}
			t.Fatalf("telnet: read: %v (have %q)", err, got)
		}
	}
}

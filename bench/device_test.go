package bench

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/testenv"
	"golang.org/x/sys/unix"
)

// startTestPyBoard writes the embedded scripts to a temporary directory
// and starts the Python board from there.
func startTestPyBoard(t *testing.T) *pyBoard {
	t.Helper()
	py := testenv.NeedTool(t, "python3", "apt-get install python3")
	dir := t.TempDir()
	if err := writeScripts(dir); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	p, err := startPyBoard(ctx, py, filepath.Join(dir, "pyboard.py"), false)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// openRaw opens the pty at path raw, as a serial client does.
func openRaw(t *testing.T, path string) *os.File {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	tio, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS)
	if err != nil {
		t.Fatal(err)
	}
	tio.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON
	tio.Oflag &^= unix.OPOST
	tio.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	if err := unix.IoctlSetTermios(int(f.Fd()), unix.TCSETS, tio); err != nil {
		t.Fatal(err)
	}
	return f
}

// readUntil reads r until what it read ends with want.
func readUntil(t *testing.T, r *bufio.Reader, want string) string {
	t.Helper()
	var got strings.Builder
	for !strings.HasSuffix(got.String(), want) {
		c, err := r.ReadByte()
		if err != nil {
			t.Fatalf("read %q, then %v; want it to end with %q", got.String(), err, want)
		}
		got.WriteByte(c)
	}
	return got.String()
}

// TestPyBoardProtocol talks to the Python board through its pty as the
// sides do: each line, ended by LF, CR or CRLF, is answered, and the
// board's record stamps every line and every reply, each reply after the
// line it answers.
func TestPyBoardProtocol(t *testing.T) {
	p := startTestPyBoard(t)
	f := openRaw(t, p.SerialPath())
	r := bufio.NewReader(f)
	for _, c := range []struct{ send, want string }{
		{"echo sync\n", syncReply},
		{"echo ping-0\r\n", "ping-0\r\n" + prompt},
		{"echo a1\r", "a1\r\n" + prompt},
		{"bogus\n", "unknown command\r\n" + prompt},
	} {
		if _, err := f.WriteString(c.send); err != nil {
			t.Fatal(err)
		}
		if got := readUntil(t, r, c.want); got != c.want {
			t.Errorf("sent %q, read %q; want %q", c.send, got, c.want)
		}
	}
	log, err := p.Log()
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range log.Rx {
		lines = append(lines, l.Line)
	}
	if want := "echo sync|echo ping-0|echo a1|bogus"; strings.Join(lines, "|") != want {
		t.Fatalf("the board received %q, want %q", strings.Join(lines, "|"), want)
	}
	if len(log.Tx) != len(log.Rx) {
		t.Fatalf("%d replies stamped, want %d", len(log.Tx), len(log.Rx))
	}
	for i, tx := range log.Tx {
		if tx.Line != i {
			t.Errorf("reply %d answers line %d, want %d", i, tx.Line, i)
		}
		if tx.At.Before(log.Rx[i].At) {
			t.Errorf("reply %d stamped %v before its line arrived", i, log.Rx[i].At.Sub(tx.At))
		}
		if i > 0 && log.Rx[i].At.Before(log.Tx[i-1].At) {
			t.Errorf("line %d stamped before the reply to the line before it", i)
		}
	}
	// The stamps are wall-clock times, within reach of this process's.
	if d := time.Since(log.Rx[0].At); d < 0 || d > time.Hour {
		t.Errorf("the first line is stamped %v ago; want a recent time", d)
	}
	if err := p.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

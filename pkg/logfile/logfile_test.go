package logfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A log on a full disk (/dev/full) never fails its writer: it counts what
// it lost, warns once, and says so in Loss.
func TestFullDiskIsCounted(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full here")
	}
	l, err := Append("exec log", "/dev/full")
	if err != nil {
		t.Fatal(err)
	}
	if n, err := l.Write([]byte("hello")); n != 5 || err != nil {
		t.Errorf("Write = %d, %v; want 5, nil", n, err)
	}
	if first := l.Put([]byte("more")); first {
		t.Error("the second failed write says it is the first")
	}
	l.Close()
	e := l.Loss()
	if e == nil || e.Lost != 9 || e.Total != 9 || !strings.Contains(e.Error(), "exec log /dev/full: 9 of 9 bytes lost: no space left on device") {
		t.Fatalf("Loss = %v", e)
	}
	if e.Unwrap() != syscall.ENOSPC && !strings.Contains(e.Unwrap().Error(), "no space") {
		t.Errorf("Unwrap = %v", e.Unwrap())
	}
}

func TestNothingLost(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.log")
	l, err := Create("console log", path)
	if err != nil {
		t.Fatal(err)
	}
	l.Write([]byte("ok\n"))
	l.Close()
	l.Close()
	if e := l.Loss(); e != nil {
		t.Errorf("Loss = %v", e)
	}
	if b, _ := os.ReadFile(path); string(b) != "ok\n" {
		t.Errorf("file holds %q", b)
	}
	if l.Put([]byte("late")) {
		t.Error("a write after Close counts as an error")
	}
}

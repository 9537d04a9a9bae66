//go:build linux

package serialx

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A pty is locked with flock on the device, never with a lock file: its
// number passes to the next pty at once, and a lock file another process
// left for the old one must not make the new one busy.
func TestPtyLock(t *testing.T) {
	t.Run("no lock file", func(t *testing.T) {
		d := newDevice(t).asPty()
		dir := t.TempDir()
		c := d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: dir})
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("lock directory holds %v for a pty, want nothing", entries)
		}
		again, err := Open(context.Background(), "again", Config{Devices: anyDevice, Dial: anyAddr, Path: d.path, LockDir: dir})
		if again != nil {
			again.Close()
		}
		wantBusy(t, err, os.Getpid(), processName(os.Getpid()))
		if want := ", flock on " + d.path; !strings.Contains(err.Error(), want) {
			t.Errorf("error = %q, want it to contain %q", err, want)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: dir}) // free again
	})
	t.Run("lock file of a reused number", func(t *testing.T) {
		d := newDevice(t).asPty()
		dir := t.TempDir()
		stale := lockPath(t, dir, d.path)
		if err := os.WriteFile(stale, []byte(hdb(holder(t))), 0o644); err != nil {
			t.Fatal(err)
		}
		d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: dir})
		if _, err := os.Stat(stale); err != nil {
			t.Errorf("the other process's lock file went: %v", err)
		}
	})
	t.Run("between processes", func(t *testing.T) {
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		d := newDevice(t).asPty()
		dir := t.TempDir()
		first := startRacer(t, exe, d.path, dir, nil)
		io.WriteString(first.stdin, "go\n")
		if _, outcome := first.result(t); outcome != "ok" {
			t.Fatalf("the first process: %s", outcome)
		}
		second := startRacer(t, exe, d.path, dir, nil)
		io.WriteString(second.stdin, "go\n")
		_, outcome := second.result(t)
		want := fmt.Sprintf("port busy: held by PID %d (%s), flock on %s", first.cmd.Process.Pid, filepath.Base(exe)[:min(15, len(filepath.Base(exe)))], d.path)
		if outcome != "err open "+d.path+": "+want {
			t.Errorf("the second process: %s\nwant it to fail with %q", outcome, want)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("lock directory holds %v for a pty, want nothing", entries)
		}
		// The first process closes the port and exits, which ends its
		// output.
		first.stdin.Close()
		io.Copy(io.Discard, first.out)
		d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: dir})
	})
}

func TestPtyDevice(t *testing.T) {
	d := newDevice(t)
	dir := t.TempDir()
	link := filepath.Join(dir, "by-id")
	if err := os.Symlink(d.path, link); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path string
		want       bool
	}{
		{"pty", d.path, true},
		{"symlink to a pty", link, true},
		{"other character device", "/dev/null", false},
		{"regular file", file, false},
		{"missing", filepath.Join(dir, "missing"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := ptyDevice(tc.path); got != tc.want {
				t.Errorf("ptyDevice(%s) = %v, want %v", tc.path, got, tc.want)
			}
		})
	}
}

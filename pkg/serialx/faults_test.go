package serialx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// TestLogLoss writes a console's log to /dev/full, where every write fails
// with ENOSPC as on a full disk: the console goes on receiving, warns once
// as it happens, and LogErr names the file and counts every byte lost.
func TestLogLoss(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	for _, tc := range []struct{ name, file, what string }{
		{"raw log", "dut.log", "console log"},
		{"timeline", "dut.timeline.jsonl", "console timeline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newDevice(t)
			dir := t.TempDir()
			// Open truncates an existing file; a symlink to /dev/full
			// makes that file a full disk.
			if err := os.Symlink("/dev/full", filepath.Join(dir, tc.file)); err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var warnings []string
			c := d.open(Config{Devices: anyDevice, Dial: anyAddr, LogDir: dir, NoLock: true, Warn: func(msg string) {
				mu.Lock()
				warnings = append(warnings, msg)
				mu.Unlock()
			}})
			d.print("first chunk\n")
			if _, err := c.Expect(timeout(t, 10*time.Second), 0, lit("first chunk"), nil); err != nil {
				t.Fatal(err)
			}
			d.print("second chunk\n")
			if _, err := c.Expect(timeout(t, 10*time.Second), 0, lit("second chunk"), nil); err != nil {
				t.Fatalf("the console stopped receiving after its log failed: %v", err)
			}
			c.Close()
			err := c.LogErr()
			var lw *LogWriteError
			if !errors.Is(err, ErrLogWrite) || !errors.Is(err, syscall.ENOSPC) || !errors.As(err, &lw) {
				t.Fatalf("LogErr = %v, want a *LogWriteError wrapping ErrLogWrite and ENOSPC", err)
			}
			if lw.File != filepath.Join(dir, tc.file) || lw.What != tc.what {
				t.Errorf("LogErr names %s %s, want %s %s", lw.What, lw.File, tc.what, filepath.Join(dir, tc.file))
			}
			if lw.Lost != lw.Total || lw.Lost == 0 {
				t.Errorf("lost %d of %d bytes, want all of them", lw.Lost, lw.Total)
			}
			if tc.what == "console log" && lw.Total != int64(len("first chunk\nsecond chunk\n")) {
				t.Errorf("the raw log was to hold %d bytes, want %d", lw.Total, len("first chunk\nsecond chunk\n"))
			}
			if !strings.Contains(err.Error(), "bytes lost") {
				t.Errorf("LogErr does not say what was lost: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if len(warnings) != 1 || !strings.Contains(warnings[0], tc.file) {
				t.Errorf("warnings = %q, want one naming %s", warnings, tc.file)
			}
		})
	}
}

// TestLogErrNil: a console whose logs are whole, or that has none, says so.
func TestLogErrNil(t *testing.T) {
	d := newDevice(t)
	for _, cfg := range []Config{{Devices: anyDevice, NoLock: true}, {Devices: anyDevice, NoLock: true, LogDir: t.TempDir()}} {
		c := d.open(cfg)
		d.print("hello\n")
		if _, err := c.Expect(timeout(t, 10*time.Second), 0, lit("hello"), nil); err != nil {
			t.Fatal(err)
		}
		c.Close()
		if err := c.LogErr(); err != nil {
			t.Errorf("LogDir %q: LogErr = %v", cfg.LogDir, err)
		}
	}
}

// TestDisconnectedWhileAway: a console with Reconnect whose device went
// away says so, with since when, until it is back; a connected or closed
// one says nothing.
func TestDisconnectedWhileAway(t *testing.T) {
	first, second := newDevice(t), newDevice(t)
	var current atomic.Pointer[string]
	current.Store(&first.path)
	c := first.open(Config{Devices: anyDevice, Dial: anyAddr, NoLock: true, Reconnect: true, Resolve: func(ctx context.Context) (string, error) {
		if p := current.Load(); p != nil {
			return *p, nil
		}
		return "", errors.New("device not enumerated")
	}})
	if err := c.Disconnected(); err != nil {
		t.Fatalf("connected console: Disconnected = %v", err)
	}
	current.Store(nil)
	first.unplug()
	eventually(t, "the console to notice", func() bool { return c.Disconnected() != nil })
	if err := c.Disconnected(); !errors.Is(err, ErrDisconnected) || !strings.Contains(err.Error(), "has not come back in the") {
		t.Errorf("Disconnected = %v", err)
	}
	current.Store(&second.path)
	eventually(t, "the console to reconnect", func() bool { return c.Disconnected() == nil })
	c.Close()
	if err := c.Disconnected(); err != nil {
		t.Errorf("closed console: Disconnected = %v", err)
	}
}

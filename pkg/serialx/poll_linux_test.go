package serialx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A tty console reads through Go's poller, and a burst larger than many
// reads of the driver arrives whole, in order, in chunks no larger than
// one batch.
func TestConsoleReadsThroughPoller(t *testing.T) {
	d := newDevice(t)
	c := d.open(Config{})
	c.mu.RLock()
	_, polled := c.port.(*pollPort)
	c.mu.RUnlock()
	if !polled {
		t.Fatalf("the console's port is a %T, not read through the poller", c.port)
	}

	var mu sync.Mutex
	var got []byte
	largest := 0
	remove := c.OnReceive(func(_ time.Time, off int64, p []byte) {
		mu.Lock()
		defer mu.Unlock()
		if off != int64(len(got)) {
			t.Errorf("chunk at offset %d, want %d", off, len(got))
		}
		got = append(got, p...)
		largest = max(largest, len(p))
	})
	defer remove()

	var want bytes.Buffer
	for i := range 20000 {
		fmt.Fprintf(&want, "line %05d of the burst\n", i)
	}
	go func() {
		if _, err := d.master.Write(want.Bytes()); err != nil {
			t.Errorf("device write: %v", err)
		}
	}()
	ctx := timeout(t, 30*time.Second)
	if _, err := c.Expect(ctx, 0, lit("line 19999 of the burst\n"), nil); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !bytes.Equal(got, want.Bytes()) {
		t.Errorf("received %d bytes, want the %d bytes written, in order", len(got), want.Len())
	}
	if largest > maxRead {
		t.Errorf("a chunk of %d bytes, more than a read (%d)", largest, maxRead)
	}
	if data, _, _ := c.Read(0, want.Len()+1); !bytes.Equal(data, want.Bytes()) {
		t.Errorf("the console's buffer holds %d bytes, want the %d written", len(data), want.Len())
	}
}

// A write that flow control holds (as after the device's XOFF) waits in the
// poller; Close ends it with ErrClosed instead of hanging, and a Release
// whose context ends does too, with ErrReleased.
func TestHeldWriteEndsOnCloseAndRelease(t *testing.T) {
	for _, how := range []string{"close", "release"} {
		t.Run(how, func(t *testing.T) {
			d := newDevice(t)
			c := d.open(Config{FlowControl: "xonxoff"})
			// Suspend the tty's output, as a received XOFF does; flushing
			// the output queue does not resume it.
			if err := unix.IoctlSetInt(int(d.slave.Fd()), unix.TCXONC, unix.TCOOFF); err != nil {
				t.Fatalf("suspend output: %v", err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := c.Write(context.Background(), bytes.Repeat([]byte("x"), 1<<20))
				done <- err
			}()
			eventually(t, "the write under way", func() bool { return len(c.wsem) == 1 })
			want := ErrClosed
			switch how {
			case "close":
				if err := c.Close(); err != nil {
					t.Errorf("Close: %v", err)
				}
			case "release":
				want = ErrReleased
				ctx, cancel := context.WithCancel(context.Background())
				released := make(chan error, 1)
				go func() { released <- c.Release(ctx) }()
				// Release has begun once it holds the hand-over turn; it
				// then waits for the write, until its context ends.
				eventually(t, "the release under way", func() bool { return len(c.hsem) == 1 })
				cancel()
				if err := <-released; err != nil {
					t.Errorf("Release: %v", err)
				}
				defer c.Close()
			}
			err := <-done
			if !errors.Is(err, want) {
				t.Errorf("the held write returned %v, want %v", err, want)
			}
			if err != nil && !strings.Contains(err.Error(), "discarded") {
				t.Errorf("the held write's error %q does not say its output was discarded", err)
			}
		})
	}
}

// ttyWatches returns the events that this process's epoll instances,
// Go's poller's among them, watch the tty at path for, through any
// descriptor but skip.
func ttyWatches(t *testing.T, path string, skip int) []uint32 {
	t.Helper()
	var tty unix.Stat_t
	if err := unix.Stat(path, &tty); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("cannot list this process's descriptors: %v", err)
	}
	var watches []uint32
	for _, e := range entries {
		if link, err := os.Readlink("/proc/self/fd/" + e.Name()); err != nil || link != "anon_inode:[eventpoll]" {
			continue
		}
		info, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue // closed since
		}
		for line := range strings.Lines(string(info)) {
			// tfd: <fd> events: <hex> data: ...
			f := strings.Fields(line)
			if len(f) < 4 || f[0] != "tfd:" || f[2] != "events:" {
				continue
			}
			fd, err1 := strconv.Atoi(f[1])
			events, err2 := strconv.ParseUint(f[3], 16, 32)
			var st unix.Stat_t
			if err1 != nil || err2 != nil || fd == skip || unix.Fstat(fd, &st) != nil {
				continue
			}
			if st.Mode&unix.S_IFMT == unix.S_IFCHR && st.Rdev == tty.Rdev {
				watches = append(watches, uint32(events))
			}
		}
	}
	return watches
}

// watching reports whether any of watches is for an event in mask.
func watching(watches []uint32, mask uint32) bool {
	for _, w := range watches {
		if w&mask != 0 {
			return true
		}
	}
	return false
}

// A console waits for its port's input only: Go's poller registers a
// descriptor for room to write too, and on a pty the board's every read of
// a line would then wake one of hilrun's threads from inside that read.
// The port is watched for room to write only while a write waits for it,
// as when flow control holds the line, and the write then completes whole
// once the line resumes.
func TestConsoleWatchesForInputOnly(t *testing.T) {
	d := newDevice(t)
	c := d.open(Config{FlowControl: "xonxoff"})
	skip := int(d.slave.Fd()) // the device's own descriptor of the tty
	ctx := timeout(t, 30*time.Second)

	d.print("ready\n")
	if _, err := c.Expect(ctx, 0, lit("ready\n"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Write(ctx, []byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 6)
	if _, err := io.ReadFull(d.master, got); err != nil || string(got) != "hello\n" {
		t.Fatalf("the device read %q (%v), want %q", got, err, "hello\n")
	}
	w := ttyWatches(t, d.path, skip)
	if !watching(w, unix.EPOLLIN) {
		t.Errorf("no epoll instance watches the port for input (watches %#x)", w)
	}
	if watching(w, unix.EPOLLOUT) {
		t.Errorf("an epoll instance watches the port for room to write while no write waits (watches %#x)", w)
	}

	// Suspend the tty's output, as a received XOFF does, so that a large
	// write waits for room.
	if err := unix.IoctlSetInt(skip, unix.TCXONC, unix.TCOOFF); err != nil {
		t.Fatalf("suspend output: %v", err)
	}
	want := make([]byte, 1<<20)
	for i := range want {
		want[i] = byte('a' + i%26)
	}
	done := make(chan error, 1)
	go func() {
		_, err := c.Write(ctx, want)
		done <- err
	}()
	eventually(t, "the held write watching for room", func() bool {
		return watching(ttyWatches(t, d.path, skip), unix.EPOLLOUT)
	})
	read := make(chan []byte, 1)
	go func() {
		b := make([]byte, len(want))
		n, err := io.ReadFull(d.master, b)
		if err != nil {
			t.Errorf("the device read %d of %d bytes: %v", n, len(want), err)
		}
		read <- b[:n]
	}()
	if err := unix.IoctlSetInt(skip, unix.TCXONC, unix.TCOON); err != nil {
		t.Fatalf("resume output: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the held write, once output resumed: %v", err)
	}
	if b := <-read; !bytes.Equal(b, want) {
		t.Errorf("the device read %d bytes, not the %d written, in order", len(b), len(want))
	}
	if w := ttyWatches(t, d.path, skip); watching(w, unix.EPOLLOUT) {
		t.Errorf("the port is still watched for room to write after the write (watches %#x)", w)
	}
	// Input still arrives.
	d.print("after\n")
	if _, err := c.Expect(ctx, 0, lit("after\n"), nil); err != nil {
		t.Fatal(err)
	}
}

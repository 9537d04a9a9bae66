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

	"go.bug.st/serial"
	"golang.org/x/sys/unix"
)

// A tty console reads through Go's poller, and a burst larger than many
// reads of the driver arrives whole, in order, in chunks no larger than
// one batch.
func TestConsoleReadsThroughPoller(t *testing.T) {
	d := newDevice(t)
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr})
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
			c := d.open(Config{Devices: anyDevice, Dial: anyAddr, FlowControl: "xonxoff"})
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
	if !nestedEpoll() {
		t.Skip("Linux before 5.7: the port is registered with the poller directly")
	}
	d := newDevice(t)
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr, FlowControl: "xonxoff"})
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
	read := make(chan deviceRead, 1) // the test may end first: no t calls in here
	go func() {
		b := make([]byte, len(want))
		n, err := io.ReadFull(d.master, b)
		read <- deviceRead{b[:n], err}
	}()
	if err := unix.IoctlSetInt(skip, unix.TCXONC, unix.TCOON); err != nil {
		t.Fatalf("resume output: %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the held write, once output resumed: %v", err)
	}
	if r := <-read; r.err != nil || !bytes.Equal(r.data, want) {
		t.Errorf("the device read %d bytes (%v), not the %d written, in order", len(r.data), r.err, len(want))
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

type deviceRead struct {
	data []byte
	err  error
}

func TestKernelAtLeast(t *testing.T) {
	for _, tt := range []struct {
		release string
		want    bool
	}{
		{"6.18.44-fc-v857", true},
		{"5.7.0", true},
		{"5.10.0-28-amd64", true},
		{"5.6.19", false},
		{"5.4.0-150-generic", false},
		{"4.19.0-26-amd64", false},
		{"10.0", true},
		{"", false},
		{"linux", false},
	} {
		if got := kernelAtLeast(tt.release, 5, 7); got != tt.want {
			t.Errorf("kernelAtLeast(%q, 5, 7) = %v, want %v", tt.release, got, tt.want)
		}
	}
}

// Both ways of waiting, the port watched for input only and registered
// with the poller directly (Linux before 5.7), read a burst whole and in
// order, complete a write that flow control held once output resumes, end
// a held write with os.ErrDeadlineExceeded when it is aborted (and every
// later write), end a waiting read with os.ErrClosed on Close, and see a
// device that went away.
func TestPollPortWaits(t *testing.T) {
	for _, watched := range []bool{true, false} {
		name := "direct"
		if watched {
			if !nestedEpoll() {
				continue
			}
			name = "watched"
		}
		t.Run(name, func(t *testing.T) {
			open := func(t *testing.T) (*device, *pollPort) {
				d := newDevice(t)
				port, err := serial.Open(d.path, &serial.Mode{BaudRate: 115200})
				if err != nil {
					t.Fatal(err)
				}
				fd, err := portFD(port)
				if err != nil {
					port.Close()
					t.Fatal(err)
				}
				p, err := newPollPort(port, fd, watched)
				if err != nil {
					port.Close()
					t.Fatal(err)
				}
				t.Cleanup(func() { p.Close() })
				if got := p.in != nil; got != watched {
					t.Fatalf("watched = %v, want %v", got, watched)
				}
				return d, p
			}
			// read collects what p reads until it fails.
			read := func(p *pollPort) (<-chan []byte, <-chan error) {
				chunks, done := make(chan []byte, 1024), make(chan error, 1)
				go func() {
					done <- p.readChunks(make([]byte, 4096), func(c []byte) { chunks <- bytes.Clone(c) })
				}()
				return chunks, done
			}

			t.Run("burst", func(t *testing.T) {
				d, p := open(t)
				chunks, done := read(p)
				want := bytes.Repeat([]byte("0123456789abcdef"), 1<<14) // 256 KiB
				go d.master.Write(want)
				var got []byte
				for len(got) < len(want) {
					select {
					case c := <-chunks:
						got = append(got, c...)
					case err := <-done:
						t.Fatalf("the read ended after %d bytes: %v", len(got), err)
					}
				}
				if !bytes.Equal(got, want) {
					t.Errorf("read %d bytes, not the %d written, in order", len(got), len(want))
				}
				p.Close()
				if err := <-done; !errors.Is(err, os.ErrClosed) {
					t.Errorf("a read waiting when the port closed returned %v, want os.ErrClosed", err)
				}
			})

			t.Run("held write resumes", func(t *testing.T) {
				d, p := open(t)
				if err := unix.IoctlSetInt(int(d.slave.Fd()), unix.TCXONC, unix.TCOOFF); err != nil {
					t.Fatalf("suspend output: %v", err)
				}
				want := bytes.Repeat([]byte("held "), 1<<16)
				wrote := make(chan error, 1)
				go func() {
					_, err := p.Write(want)
					wrote <- err
				}()
				got := make(chan deviceRead, 1)
				go func() {
					b := make([]byte, len(want))
					n, err := io.ReadFull(d.master, b)
					got <- deviceRead{b[:n], err}
				}()
				if err := unix.IoctlSetInt(int(d.slave.Fd()), unix.TCXONC, unix.TCOON); err != nil {
					t.Fatalf("resume output: %v", err)
				}
				if err := <-wrote; err != nil {
					t.Fatalf("the held write: %v", err)
				}
				if r := <-got; r.err != nil || !bytes.Equal(r.data, want) {
					t.Errorf("the device read %d bytes (%v), not the %d written", len(r.data), r.err, len(want))
				}
			})

			t.Run("held write aborted", func(t *testing.T) {
				d, p := open(t)
				if err := unix.IoctlSetInt(int(d.slave.Fd()), unix.TCXONC, unix.TCOOFF); err != nil {
					t.Fatalf("suspend output: %v", err)
				}
				wrote := make(chan error, 1)
				go func() {
					_, err := p.Write(bytes.Repeat([]byte("x"), 1<<20))
					wrote <- err
				}()
				if watched {
					eventually(t, "the write waiting for room", func() bool {
						return watching(ttyWatches(t, d.path, int(d.slave.Fd())), unix.EPOLLOUT)
					})
				}
				p.abortWrites()
				if err := <-wrote; !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Errorf("the aborted write returned %v, want os.ErrDeadlineExceeded", err)
				}
				if _, err := p.Write([]byte("later")); !errors.Is(err, os.ErrDeadlineExceeded) {
					t.Errorf("a write after abortWrites returned %v, want os.ErrDeadlineExceeded", err)
				}
			})

			t.Run("device gone", func(t *testing.T) {
				d, p := open(t)
				_, done := read(p)
				d.unplug()
				if err := <-done; err == nil {
					t.Error("the read went on after the device went away")
				}
			})
		})
	}
}

package serialx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
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

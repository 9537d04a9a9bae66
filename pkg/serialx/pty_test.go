package serialx

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
)

// device plays a board on the master side of a pty; hilrun opens the slave
// side as its serial port. It stands in for a real serial port, with a UUCP
// lock file (standIns), unless the test says otherwise (asPty).
type device struct {
	t      *testing.T
	master *os.File
	slave  *os.File
	path   string

	mu     sync.Mutex
	closed bool
}

func newDevice(t *testing.T) *device {
	t.Helper()
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pty available: %v", err)
	}
	// Raw from the start, so nothing typed before Open is echoed or
	// translated.
	if _, err := term.MakeRaw(int(slave.Fd())); err != nil {
		t.Fatalf("make pty raw: %v", err)
	}
	d := &device{t: t, master: master, slave: slave, path: slave.Name()}
	standIn(d.path)
	t.Cleanup(func() {
		unStandIn(d.path)
		d.unplug()
		slave.Close()
	})
	return d
}

// print writes s to the console as the device's output; after unplug it
// does nothing.
func (d *device) print(s string) {
	d.t.Helper()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return
	}
	if _, err := d.master.Write([]byte(s)); err != nil {
		d.t.Errorf("device print %q: %v", s, err)
	}
}

// unplug closes the master side: the console sees a hang-up.
func (d *device) unplug() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		d.closed = true
		d.master.Close()
	}
}

// shell answers each line hilrun sends with reply(line) until unplugged.
func (d *device) shell(reply func(line string) string) {
	go func() {
		r := bufio.NewReader(d.master)
		for {
			line, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if out := reply(strings.TrimRight(line, "\r\n")); out != "" {
				if _, err := d.master.Write([]byte(out)); err != nil {
					return
				}
			}
		}
	}()
}

// open opens the device's slave as console "dut" and closes it at the end
// of the test.
func (d *device) open(cfg Config) *Console {
	d.t.Helper()
	if cfg.Path == "" && cfg.Resolve == nil {
		cfg.Path = d.path
	}
	c, err := Open(context.Background(), "dut", cfg)
	if err != nil {
		d.t.Fatalf("Open: %v", err)
	}
	d.t.Cleanup(func() { c.Close() })
	return c
}

func timeout(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// eventually polls cond for up to 20 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// asPty makes the device lock as the pty it is, with flock on the device
// and no lock file, rather than standing in for a real serial port.
func (d *device) asPty() *device {
	unStandIn(d.path)
	return d
}

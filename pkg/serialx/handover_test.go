//go:build unix

package serialx

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/stream"
)

func expectOK(t *testing.T, c *Console, from int64, want string) stream.Match {
	t.Helper()
	m, err := c.Expect(timeout(t, 20*time.Second), from, lit(want), nil)
	if err != nil {
		t.Fatalf("Expect(%q): %v", want, err)
	}
	return m
}

func TestReleaseReacquire(t *testing.T) {
	d := newDevice(t)
	dir := t.TempDir()
	lock := lockPath(t, dir, d.path)
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: dir, Reconnect: true})
	d.print("app 1\r\n")
	expectOK(t, c, 0, "app 1\r\n")
	stop := c.Cursor()

	if err := c.Release(timeout(t, 20*time.Second)); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if !c.Released() {
		t.Error("Released() = false after Release")
	}
	if s := c.Stats(); !s.Released || s.Connected {
		t.Errorf("Stats = %+v, want Released and not Connected", s)
	}
	wantGone(t, lock)
	if err := c.Release(timeout(t, 20*time.Second)); err != nil {
		t.Errorf("second Release: %v", err)
	}

	// Writes fail at once, even with Reconnect, which would wait 10 s for
	// a disconnected device.
	start := time.Now()
	_, err := c.Write(timeout(t, 20*time.Second), []byte("x"))
	if !errors.Is(err, ErrReleased) || err.Error() != d.path+": port released for hand-over" {
		t.Errorf("Write while released = %v, want %s: port released for hand-over", err, d.path)
	}
	if elapsed := time.Since(start); elapsed > 10*time.Second {
		t.Errorf("Write while released took %v", elapsed)
	}

	// The uploader opens the port, which is free, and closes it.
	up, err := Open(context.Background(), "uploader", Config{Devices: anyDevice, Dial: anyAddr, Path: d.path, LockDir: dir})
	if err != nil {
		t.Fatalf("another program cannot open the released port: %v", err)
	}
	d.print("during\r\n")
	expectOK(t, up, 0, "during\r\n")
	if err := up.Close(); err != nil {
		t.Fatal(err)
	}
	d.print("unread\r\n") // nobody has the port open for reading now

	if err := c.Reacquire(timeout(t, 20*time.Second), ReacquireOptions{Timeout: 20 * time.Second}); err != nil {
		t.Fatalf("Reacquire: %v", err)
	}
	if c.Released() || !c.Stats().Connected {
		t.Errorf("after Reacquire: Released() = %v, Stats = %+v", c.Released(), c.Stats())
	}
	if got := readLock(t, lock); got != hdb(os.Getpid()) {
		t.Errorf("lock after Reacquire = %q", got)
	}
	if err := c.Reacquire(timeout(t, 20*time.Second), ReacquireOptions{}); err != nil {
		t.Errorf("Reacquire of an acquired console: %v", err)
	}
	if n := c.Opens(); n != 2 {
		t.Errorf("Opens() = %d after one Reacquire, want 2: a fresh connection", n)
	}
	d.print("app 2\r\n")
	m := expectOK(t, c, stop, "app 2\r\n")
	// What the uploader read is not the console's. What the device printed
	// while nobody read is kept by a pty (a USB device would drop it).
	data, _, _ := c.Read(stop, 0)
	if got := string(data); got != "unread\r\napp 2\r\n" && got != "app 2\r\n" {
		t.Errorf("output after the hand-over = %q", got)
	}
	t.Logf("after the hand-over: %q (match at %d)", data, m.Start)

	d.shell(func(line string) string { return "echo " + line + "\r\n" })
	cur, err := c.Write(timeout(t, 20*time.Second), []byte("hi\n"))
	if err != nil {
		t.Fatalf("Write after Reacquire: %v", err)
	}
	expectOK(t, c, cur, "echo hi")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	wantGone(t, lock)
}

// After an upload the board re-enumerates under another name; the console
// follows it, and reads its output from the first byte.
func TestReacquireFollowsDevice(t *testing.T) {
	first := newDevice(t)
	dir := t.TempDir()
	c := first.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: dir})
	first.print("old firmware\r\n")
	expectOK(t, c, 0, "old firmware\r\n")
	stop := c.Cursor()
	if err := c.Release(timeout(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	first.unplug()

	var current atomic.Pointer[device]
	resolve := func(ctx context.Context) (string, error) {
		if d := current.Load(); d != nil {
			return d.path, nil
		}
		return "", errors.New("not enumerated yet")
	}
	done := make(chan error, 1)
	go func() {
		done <- c.Reacquire(timeout(t, 20*time.Second), ReacquireOptions{Timeout: 20 * time.Second, Resolve: resolve})
	}()
	time.Sleep(100 * time.Millisecond)
	second := newDevice(t)
	// The new firmware prints its banner as soon as it runs, before the
	// console can have opened the port.
	second.print("new firmware\r\n")
	current.Store(second)
	if err := <-done; err != nil {
		t.Fatalf("Reacquire: %v", err)
	}
	if c.Path() != second.path {
		t.Errorf("Path() = %s, want %s", c.Path(), second.path)
	}
	m := expectOK(t, c, stop, "new firmware\r\n")
	if m.Start != stop {
		t.Errorf("banner at offset %d, want %d: output was lost or offsets restarted", m.Start, stop)
	}
	if got := readLock(t, lockPath(t, dir, second.path)); got != hdb(os.Getpid()) {
		t.Errorf("lock of the new path = %q", got)
	}
}

// Without a resolver Reacquire follows the USB identity Release noted.
func TestReacquireFollowsUSBIdentity(t *testing.T) {
	first := newDevice(t)
	c := first.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: t.TempDir()})
	board := PortInfo{IsUSB: true, VID: "2e8a", PID: "000a", SerialNumber: "E6614C311B"}
	var ports atomic.Pointer[[]PortInfo]
	set := func(list ...PortInfo) { ports.Store(&list) }
	c.listPorts = func() ([]PortInfo, error) { return *ports.Load(), nil }

	at := func(p PortInfo, path string) PortInfo { p.Path = path; return p }
	set(at(board, first.path), PortInfo{Path: "/dev/ttyS0"})
	if err := c.Release(timeout(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	first.unplug()
	// In the bootloader the board is another device; then the application
	// comes back under a new name, next to an identical board.
	set(PortInfo{Path: "/dev/ttyACM9", IsUSB: true, VID: "2e8a", PID: "0003"})
	second := newDevice(t)
	other := newDevice(t)
	go func() {
		time.Sleep(100 * time.Millisecond)
		set(at(board, second.path), PortInfo{Path: other.path, IsUSB: true, VID: "2e8a", PID: "000a", SerialNumber: "E6614C3122"})
	}()
	if err := c.Reacquire(timeout(t, 20*time.Second), ReacquireOptions{Timeout: 20 * time.Second}); err != nil {
		t.Fatalf("Reacquire: %v", err)
	}
	if c.Path() != second.path {
		t.Errorf("Path() = %s, want %s (the board with serial number E6614C311B)", c.Path(), second.path)
	}
}

func TestExpectAcrossRelease(t *testing.T) {
	d := newDevice(t)
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: t.TempDir()})
	from := c.Cursor()
	type result struct {
		m   stream.Match
		err error
	}
	waiting := make(chan result, 1)
	go func() {
		m, err := c.Expect(timeout(t, 10*time.Second), from, lit("READY"), nil)
		waiting <- result{m, err}
	}()
	if err := c.Release(timeout(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	select {
	case r := <-waiting:
		t.Fatalf("Expect returned while released: %v", r.err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := c.Reacquire(timeout(t, 20*time.Second), ReacquireOptions{}); err != nil {
		t.Fatal(err)
	}
	d.print("boot\r\nREADY\r\n")
	if r := <-waiting; r.err != nil || r.m.Start != from+6 {
		t.Errorf("Expect across the hand-over = %+v, %v", r.m, r.err)
	}
}

// A board reset into its bootloader disconnects first; the hand-over then
// starts from a disconnected console.
func TestReleaseAfterDisconnect(t *testing.T) {
	first := newDevice(t)
	c := first.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: t.TempDir()})
	first.unplug()
	eventually(t, "disconnection", func() bool { return !c.Stats().Connected && c.Stats().Err != "" })
	if err := c.Release(timeout(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	if s := c.Stats(); s.Err != "" || !s.Released {
		t.Errorf("Stats after Release = %+v, want Released without the disconnection error", s)
	}
	second := newDevice(t)
	err := c.Reacquire(timeout(t, 20*time.Second), ReacquireOptions{
		Resolve: func(context.Context) (string, error) { return second.path, nil },
	})
	if err != nil {
		t.Fatal(err)
	}
	second.print("app\r\n")
	expectOK(t, c, 0, "app\r\n")
}

func TestReacquireErrors(t *testing.T) {
	t.Run("timeout", func(t *testing.T) {
		d := newDevice(t)
		c := d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: t.TempDir()})
		if err := c.Release(timeout(t, 20*time.Second)); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		err := c.Reacquire(timeout(t, 20*time.Second), ReacquireOptions{
			Timeout: 150 * time.Millisecond,
			Resolve: func(context.Context) (string, error) { return "", errors.New("no USB 2e8a:000a") },
		})
		want := "reacquire " + d.path + ": not back within 150ms: no USB 2e8a:000a"
		if err == nil || err.Error() != want {
			t.Errorf("Reacquire = %v\nwant        %s", err, want)
		}
		if elapsed := time.Since(start); elapsed > 10*time.Second {
			t.Errorf("Reacquire took %v", elapsed)
		}
		if !c.Released() {
			t.Error("a failed Reacquire left the console not released")
		}
		if err := c.Reacquire(timeout(t, 20*time.Second), ReacquireOptions{}); err != nil {
			t.Errorf("retry: %v", err)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		d := newDevice(t)
		c := d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: t.TempDir()})
		if err := c.Release(timeout(t, 20*time.Second)); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		err := c.Reacquire(ctx, ReacquireOptions{Resolve: func(context.Context) (string, error) { return "", errors.New("gone") }})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Reacquire = %v, want context.DeadlineExceeded", err)
		}
	})
	t.Run("close stops it", func(t *testing.T) {
		d := newDevice(t)
		c := d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: t.TempDir()})
		if err := c.Release(timeout(t, 20*time.Second)); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() {
			done <- c.Reacquire(timeout(t, time.Minute), ReacquireOptions{
				Timeout: time.Minute,
				Resolve: func(context.Context) (string, error) { return "", errors.New("gone") },
			})
		}()
		time.Sleep(50 * time.Millisecond)
		start := time.Now()
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-done; !errors.Is(err, ErrClosed) {
			t.Errorf("Reacquire = %v, want ErrClosed", err)
		}
		if elapsed := time.Since(start); elapsed > 10*time.Second {
			t.Errorf("Close took %v", elapsed)
		}
		if err := c.Release(timeout(t, 20*time.Second)); !errors.Is(err, ErrClosed) {
			t.Errorf("Release after Close = %v, want ErrClosed", err)
		}
	})
}

// The uploader still holds its lock: Reacquire waits for it rather than
// taking the port from under a running upload.
func TestReacquireWaitsForUploader(t *testing.T) {
	d := newDevice(t)
	dir := t.TempDir()
	lock := lockPath(t, dir, d.path)
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: dir})
	if err := c.Release(timeout(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	uploader := holder(t)
	if err := os.WriteFile(lock, []byte(hdb(uploader)), 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- c.Reacquire(timeout(t, 10*time.Second), ReacquireOptions{Timeout: 20 * time.Second})
	}()
	select {
	case err := <-done:
		t.Fatalf("Reacquire returned while the uploader held the port: %v", err)
	case <-time.After(300 * time.Millisecond):
	}
	if !c.Released() {
		t.Fatal("console took the port from the uploader")
	}
	os.Remove(lock) // the upload ends
	if err := <-done; err != nil {
		t.Fatalf("Reacquire: %v", err)
	}

	// Had it timed out, the error says who holds the port.
	if err := c.Release(timeout(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(lock, []byte(hdb(uploader)), 0o644)
	err := c.Reacquire(timeout(t, 20*time.Second), ReacquireOptions{Timeout: 100 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "not back within 100ms: open "+d.path+": port busy: held by PID") {
		t.Errorf("Reacquire = %v", err)
	}
}

// Release, Reacquire, Write, Expect and Stats from many goroutines while the
// device streams; run with -race.
func TestHandoverConcurrent(t *testing.T) {
	d := newDevice(t)
	dir := t.TempDir()
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: dir})
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			d.print("tick\r\n")
			time.Sleep(time.Millisecond)
		}
	})
	var releases, reacquires atomic.Int64
	for i := range 4 {
		wg.Go(func() {
			for j := range 20 {
				ctx := timeout(t, 20*time.Second)
				if (i+j)%2 == 0 {
					if err := c.Release(ctx); err != nil {
						t.Errorf("Release: %v", err)
					}
					releases.Add(1)
				} else {
					if err := c.Reacquire(ctx, ReacquireOptions{Timeout: 20 * time.Second}); err != nil {
						t.Errorf("Reacquire: %v", err)
					}
					reacquires.Add(1)
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			for range 100 {
				_, err := c.Write(timeout(t, 20*time.Second), []byte("x"))
				if err != nil && !errors.Is(err, ErrReleased) {
					t.Errorf("Write: %v", err)
				}
				c.Stats()
				c.Released()
				c.Path()
				time.Sleep(time.Millisecond)
			}
		})
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	if err := c.Reacquire(timeout(t, 20*time.Second), ReacquireOptions{}); err != nil {
		t.Fatal(err)
	}
	d.print("END\r\n")
	expectOK(t, c, 0, "END\r\n")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("%d lock files left", len(entries))
	}
	t.Logf("%d releases, %d reacquisitions", releases.Load(), reacquires.Load())
}

func TestHandoverLogged(t *testing.T) {
	d := newDevice(t)
	logs := t.TempDir()
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: t.TempDir(), LogDir: logs})
	if err := c.Release(timeout(t, 20*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := c.Reacquire(timeout(t, 20*time.Second), ReacquireOptions{}); err != nil {
		t.Fatal(err)
	}
	c.Close()
	_, tl := c.LogPaths()
	b, err := os.ReadFile(tl)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range []string{`"event":"released","detail":"` + d.path + `"`, `"event":"reacquired","detail":"` + d.path + ` after `, `released (since `, `what the device sent meanwhile was not read"`} {
		if !strings.Contains(string(b), ev) {
			t.Errorf("timeline lacks %s:\n%s", ev, b)
		}
	}
}

// A write in progress when Release is called reaches the device whole.
func TestReleaseLetsWriteFinish(t *testing.T) {
	d := newDevice(t)
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: t.TempDir()})
	payload := []byte(strings.Repeat("0123456789abcdef", 32<<10/16))
	received := make(chan int, 1)
	go func() {
		n := 0
		p := make([]byte, 512)
		for n < len(payload) {
			k, err := d.master.Read(p)
			if err != nil {
				break
			}
			n += k
			time.Sleep(time.Millisecond) // a slow device
		}
		received <- n
	}()
	wrote := make(chan error, 1)
	go func() {
		_, err := c.Write(timeout(t, 10*time.Second), payload)
		wrote <- err
	}()
	eventually(t, "the write to start", func() bool { return c.Stats().TxBytes > 0 })
	if err := c.Release(timeout(t, 10*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Errorf("Write interrupted by Release: %v", err)
	}
	select {
	case n := <-received:
		if n != len(payload) {
			t.Errorf("device received %d bytes, want %d", n, len(payload))
		}
	case <-time.After(5 * time.Second):
		t.Errorf("device received part of the write only")
	}
}

// TestCloseDuringRelease: a console closed while a Release is under way
// (looking the port's USB identity up, before it takes the write turn)
// closes, and the Release ends: Close takes the hand-over turn before the
// write turn, as Release does, and a Release waiting for the write turn
// gives way to Close.
func TestCloseDuringRelease(t *testing.T) {
	d := newDevice(t)
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: t.TempDir()})
	looking := make(chan struct{})
	goOn := make(chan struct{})
	c.listPorts = func() ([]PortInfo, error) {
		close(looking)
		<-goOn
		return nil, nil
	}
	released := make(chan error, 1)
	go func() { released <- c.Release(context.Background()) }()
	<-looking
	closed := make(chan error, 1)
	go func() { closed <- c.Close() }()
	eventually(t, "Close to begin", c.closing.Load)
	close(goOn)
	for what, ch := range map[string]chan error{"Release": released, "Close": closed} {
		select {
		case <-ch:
		case <-time.After(20 * time.Second):
			t.Fatalf("%s did not return: Close and Release each waited for the other", what)
		}
	}
	if _, err := c.Write(context.Background(), []byte("x")); !errors.Is(err, ErrClosed) {
		t.Errorf("a write after Close: %v, want ErrClosed", err)
	}
}

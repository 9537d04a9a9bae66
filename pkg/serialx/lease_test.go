//go:build unix

package serialx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// clock is a settable clock for Leases.Now.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newClockLeases() (*Leases, *clock) {
	ck := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	l := NewLeases()
	l.Now = ck.now
	return l, ck
}

func TestLeaseHoldReleaseDrop(t *testing.T) {
	ls, ck := newClockLeases()
	ctx := context.Background()
	l, err := ls.Hold(ctx, "/dev/ttyX", "s1", LeaseOptions{Note: "console_hold"})
	if err != nil {
		t.Fatal(err)
	}
	if l.Owner != "s1" || l.State != LeaseHeld || !l.Expires.IsZero() {
		t.Errorf("Hold = %+v", l)
	}
	// The owner may use it, another may not, and is told who has it.
	if err := ls.Check("/dev/ttyX", "s1"); err != nil {
		t.Errorf("Check by the owner: %v", err)
	}
	err = ls.Check("/dev/ttyX", "s2")
	var le *LeaseError
	if !errors.As(err, &le) || !errors.Is(err, ErrLeased) || le.Lease.Owner != "s1" {
		t.Fatalf("Check by another = %v", err)
	}
	if want := "/dev/ttyX is held by s1 since 03:04:05.000 (console_hold)"; err.Error() != want {
		t.Errorf("error = %q, want %q", err, want)
	}
	if _, err := ls.Hold(ctx, "/dev/ttyX", "s2", LeaseOptions{}); !errors.Is(err, ErrLeased) {
		t.Errorf("Hold by another = %v, want ErrLeased", err)
	}

	// Released: still the owner's, and the message says so.
	ck.add(time.Second)
	l, err = ls.Release(ctx, "/dev/ttyX", "s1", LeaseOptions{})
	if err != nil || l.State != LeaseReleased || !l.Changed.Equal(ck.now()) || l.Since.Equal(l.Changed) {
		t.Fatalf("Release = %+v, %v", l, err)
	}
	err = ls.Check("/dev/ttyX", "s2")
	if err == nil || !strings.Contains(err.Error(), "released for another program by s1 since 03:04:06.000, and only it may take the port back") {
		t.Errorf("Check of a released lease = %v", err)
	}

	// Another owner's Drop does nothing; the owner's ends it.
	if ls.Drop("/dev/ttyX", "s2") {
		t.Error("Drop by another owner reported a lease")
	}
	if !ls.Drop("/dev/ttyX", "s1") {
		t.Error("Drop by the owner found no lease")
	}
	if _, ok := ls.Get("/dev/ttyX"); ok {
		t.Error("lease still there after Drop")
	}
	if _, err := ls.Hold(ctx, "/dev/ttyX", "s2", LeaseOptions{}); err != nil {
		t.Errorf("Hold after Drop: %v", err)
	}
	if _, err := ls.Hold(ctx, "/dev/ttyX", "", LeaseOptions{}); err == nil {
		t.Error("Hold without an owner succeeded")
	}
}

func TestLeaseExpiry(t *testing.T) {
	ls, ck := newClockLeases()
	ctx := context.Background()
	if _, err := ls.Hold(ctx, "a", "run1", LeaseOptions{TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	ck.add(59 * time.Second)
	if err := ls.Check("a", "run2"); !errors.Is(err, ErrLeased) || !strings.Contains(err.Error(), "lapses at 03:05:05.000") {
		t.Errorf("Check before expiry = %v", err)
	}
	// Renewing starts the TTL again.
	if _, err := ls.Hold(ctx, "a", "run1", LeaseOptions{TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	ck.add(59 * time.Second)
	if _, ok := ls.Get("a"); !ok {
		t.Error("renewed lease lapsed early")
	}
	ck.add(time.Second)
	if _, ok := ls.Get("a"); ok {
		t.Error("lease outlived its TTL")
	}
	if len(ls.List()) != 0 {
		t.Errorf("List = %v", ls.List())
	}
	l, err := ls.Hold(ctx, "a", "run2", LeaseOptions{})
	if err != nil || l.Owner != "run2" {
		t.Errorf("Hold after expiry = %+v, %v", l, err)
	}
}

// A caller that waits for a lease gets it once the holder drops it; one
// that does not gets a LeaseError.
func TestLeaseWait(t *testing.T) {
	ls := NewLeases()
	ctx := context.Background()
	if _, err := ls.Hold(ctx, "p", "a", LeaseOptions{}); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		_, err := ls.Hold(ctx, "p", "b", LeaseOptions{Wait: time.Minute})
		got <- err
	}()
	// b is blocked until a drops; a then owns nothing.
	select {
	case err := <-got:
		t.Fatalf("Hold returned while the port was held: %v", err)
	default:
	}
	if n := ls.DropOwner("a"); len(n) != 1 || n[0].Key != "p" {
		t.Errorf("DropOwner = %v", n)
	}
	if err := <-got; err != nil {
		t.Fatalf("waiting Hold: %v", err)
	}
	if l, _ := ls.Get("p"); l.Owner != "b" {
		t.Errorf("owner = %q, want b", l.Owner)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ls.Hold(cctx, "p", "c", LeaseOptions{Wait: time.Minute}); !errors.Is(err, context.Canceled) || !errors.Is(err, ErrLeased) {
		t.Errorf("cancelled wait = %v", err)
	}
}

// A waiter for a lease with a TTL gets it when the TTL runs out, without a
// Drop.
func TestLeaseWaitForExpiry(t *testing.T) {
	ls := NewLeases()
	ctx := context.Background()
	if _, err := ls.Hold(ctx, "p", "killed run", LeaseOptions{TTL: 50 * time.Millisecond}); err != nil {
		t.Fatal(err)
	}
	l, err := ls.Hold(ctx, "p", "next run", LeaseOptions{Wait: 20 * time.Second})
	if err != nil || l.Owner != "next run" {
		t.Fatalf("Hold = %+v, %v", l, err)
	}
}

// otherProgram is a program other than hilrun that uses the port as
// picocom does: it creates the UUCP lock file (O_EXCL, so it fails while
// hilrun's is there), opens the tty and puts it in exclusive mode.
type otherProgram struct {
	f    *os.File
	lock string
}

func openAsOther(dir, path string) (*otherProgram, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, err
	}
	lock := filepath.Join(dir, "LCK.."+filepath.Base(real))
	lf, err := os.OpenFile(lock, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return nil, err
	}
	_, err = lf.WriteString(hdb(os.Getpid()))
	lf.Close()
	if err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		os.Remove(lock)
		return nil, err
	}
	if err := unix.IoctlSetInt(int(f.Fd()), unix.TIOCEXCL, 0); err != nil {
		f.Close()
		os.Remove(lock)
		return nil, err
	}
	return &otherProgram{f: f, lock: lock}, nil
}

func (o *otherProgram) close() {
	unix.IoctlSetInt(int(o.f.Fd()), unix.TIOCNXCL, 0)
	o.f.Close()
	os.Remove(o.lock)
}

// Releasing a console through its lease lets another program open the
// port; holding it takes it back, and the cursor and log go on with the
// gap recorded.
func TestLeaseConsoleHandOver(t *testing.T) {
	d := newDevice(t)
	dir := t.TempDir()
	lock := lockPath(t, dir, d.path)
	logs := t.TempDir()
	c := d.open(Config{Devices: anyDevice, Dial: anyAddr, LockDir: dir, LogDir: logs})
	ls := NewLeases()
	ctx := timeout(t, 20*time.Second)
	d.print("before\r\n")
	expectOK(t, c, 0, "before\r\n")
	stop := c.Cursor()

	// Another owner cannot release what s1 holds.
	if _, err := ls.Hold(ctx, LeaseKey(d.path), "s1", LeaseOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := ls.ReleaseConsole(ctx, c, "s2", LeaseOptions{}); !errors.Is(err, ErrLeased) {
		t.Fatalf("ReleaseConsole by another owner = %v", err)
	}
	if c.Released() {
		t.Fatal("the console let go for an owner that does not hold it")
	}

	l, err := ls.ReleaseConsole(ctx, c, "s1", LeaseOptions{})
	if err != nil || l.State != LeaseReleased {
		t.Fatalf("ReleaseConsole = %+v, %v", l, err)
	}
	wantGone(t, lock)
	other, err := openAsOther(dir, d.path)
	if err != nil {
		t.Fatalf("another program cannot open the released port: %v", err)
	}
	d.print("theirs\r\n")
	var got []byte
	for !strings.Contains(string(got), "theirs\r\n") {
		buf := make([]byte, 64)
		n, err := other.f.Read(buf)
		if err != nil {
			t.Fatalf("the other program read %q, then %v", got, err)
		}
		got = append(got, buf[:n]...)
	}

	// While the other program has the port, taking it back waits, and
	// gives up after its timeout with the lease still released.
	if _, err := ls.HoldConsole(ctx, c, "s1", LeaseOptions{}, ReacquireOptions{Timeout: 100 * time.Millisecond}); err == nil {
		t.Fatal("HoldConsole took the port from the program that has it")
	}
	if l, _ := ls.Get(LeaseKey(d.path)); l.State != LeaseReleased || l.Owner != "s1" {
		t.Errorf("lease after a failed HoldConsole = %+v", l)
	}
	if _, err := ls.HoldConsole(ctx, c, "s2", LeaseOptions{}, ReacquireOptions{}); !errors.Is(err, ErrLeased) {
		t.Errorf("HoldConsole by another owner = %v", err)
	}
	other.close()

	l, err = ls.HoldConsole(ctx, c, "s1", LeaseOptions{}, ReacquireOptions{Timeout: 20 * time.Second})
	if err != nil || l.State != LeaseHeld {
		t.Fatalf("HoldConsole = %+v, %v", l, err)
	}
	if c.Released() {
		t.Error("still released after HoldConsole")
	}
	d.print("after\r\n")
	m := expectOK(t, c, stop, "after\r\n")
	if string(m.Data) != "after\r\n" {
		t.Errorf("output from the old cursor = %q, want only what came after the hand-over", m.Data)
	}
	gaps := c.Gaps()
	if len(gaps) != 1 || gaps[0].Offset != stop || gaps[0].Until.Before(gaps[0].From) || gaps[0].Until.IsZero() {
		t.Errorf("Gaps = %+v, want one at %d", gaps, stop)
	}
	c.Close()
	raw, tl := c.LogPaths()
	if b, _ := os.ReadFile(raw); string(b) != "before\r\nafter\r\n" {
		t.Errorf("raw log = %q", b)
	}
	b, _ := os.ReadFile(tl)
	if !strings.Contains(string(b), `"event":"released"`) || !strings.Contains(string(b), "what the device sent meanwhile was not read") {
		t.Errorf("timeline does not record the gap:\n%s", b)
	}
}

// fakeHandOver is a console that lets go and takes back at once.
type fakeHandOver struct {
	path     string
	released bool
}

func (f *fakeHandOver) Path() string                  { return f.path }
func (f *fakeHandOver) Release(context.Context) error { f.released = true; return nil }
func (f *fakeHandOver) Reacquire(context.Context, ReacquireOptions) error {
	f.released = false
	return nil
}

// A hold survives a hand-over: taking the port back, or the release
// lapsing, restores it as it was.
func TestLeaseReleaseKeepsHold(t *testing.T) {
	ls, ck := newClockLeases()
	ctx := context.Background()
	c := &fakeHandOver{path: "/dev/ttyNoSuch9"}
	key := LeaseKey(c.path)
	held, err := ls.Hold(ctx, key, "s1", LeaseOptions{TTL: time.Hour, Note: "flashing"})
	if err != nil {
		t.Fatal(err)
	}
	ck.add(time.Second)
	if _, err := ls.ReleaseConsole(ctx, c, "s1", LeaseOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := ls.TakeBackConsole(ctx, c, "s2", ReacquireOptions{}); !errors.Is(err, ErrLeased) || !c.released {
		t.Fatalf("TakeBackConsole by another owner = %v (released %v)", err, c.released)
	}
	l, ok, err := ls.TakeBackConsole(ctx, c, "s1", ReacquireOptions{})
	if err != nil || !ok || c.released || l.State != LeaseHeld || l.Note != "flashing" || !l.Expires.Equal(held.Expires) || !l.Since.Equal(held.Since) {
		t.Fatalf("TakeBackConsole = %+v, %v, %v", l, ok, err)
	}

	// A release with a TTL lapses back to the hold under it.
	if _, err := ls.ReleaseConsole(ctx, c, "s1", LeaseOptions{TTL: time.Minute}); err != nil {
		t.Fatal(err)
	}
	ck.add(time.Minute)
	if l, ok := ls.Get(key); !ok || l.State != LeaseHeld || l.Note != "flashing" {
		t.Fatalf("after the release lapsed: %+v, %v", l, ok)
	}

	// Lock while released takes the hold under the release; Unlock ends
	// it and leaves the release.
	ls.Drop(key, "s1")
	if _, err := ls.ReleaseConsole(ctx, c, "s1", LeaseOptions{}); err != nil {
		t.Fatal(err)
	}
	if l, err := ls.Lock(ctx, key, "s1", LeaseOptions{Note: "again"}); err != nil || l.State != LeaseHeld {
		t.Fatalf("Lock while released = %+v, %v", l, err)
	}
	if l, _ := ls.Get(key); l.State != LeaseReleased {
		t.Fatalf("Lock while released changed the release: %+v", l)
	}
	if !ls.Unlock(key, "s1") {
		t.Fatal("Unlock found no hold under the release")
	}
	if l, ok := ls.Get(key); !ok || l.State != LeaseReleased {
		t.Fatalf("after Unlock: %+v, %v", l, ok)
	}

	// Without a hold before it, taking back ends the lease.
	ls.Drop(key, "s1")
	if _, err := ls.ReleaseConsole(ctx, c, "s1", LeaseOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := ls.TakeBackConsole(ctx, c, "s1", ReacquireOptions{}); err != nil || ok {
		t.Fatalf("TakeBackConsole without a hold = %v, %v", ok, err)
	}
	if l, ok := ls.Get(key); ok {
		t.Errorf("lease after taking back = %+v", l)
	}
}

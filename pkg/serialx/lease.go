package serialx

import (
	"context"
	"errors"
	"fmt"
	"github.com/hilrun/hilrun/pkg/steps"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// Leases is the one record, in a process, of who holds which serial port
// across calls: an MCP session that holds a port for several calls (the
// PlatformIO tools' acquire_lock), a pool run that holds its bench's ports,
// a session that released a console for a flasher (console_release) and
// will take it back (console_hold). A lease is keyed by the port (LeaseKey)
// and names its owner (an MCP session id, a run id):
//
//   - held: the owner uses the port, and the other callers of this process
//     must not (Check names the owner to them);
//   - released: the owner gave the port to another program, a flasher or a
//     terminal, and keeps the right to take it back; ReleaseConsole closes
//     the console's descriptor and removes its lock file, so the other
//     program can open the port;
//   - taken back: HoldConsole reopens the port with the console's settings;
//     the console's cursor and log go on, and its timeline records the gap
//     (Console.Gaps).
//
// A lease may expire (LeaseOptions.TTL): one its owner does not renew in
// time lapses and the port is free again, so a run that was killed, or a
// session that went away without ending, never leaves a port held for
// ever. DropOwner ends every lease of an owner, as the end of an MCP
// session does.
//
// Leases sit above the port locks: while a console has its port open it
// holds the port's UUCP lock file and exclusive mode, which keep other
// programs and other hilrun processes away (a killed process's lock file is
// stale and taken over at once); a lease says which caller in this process
// the port belongs to, including while the console has let go of it.
//
// The zero value is not usable; make one with NewLeases. Its methods are
// safe for concurrent use.
type Leases struct {
	// Now is the clock; nil means time.Now. Tests set it to move expiry
	// along.
	Now func() time.Time

	mu      sync.Mutex
	m       map[string]*Lease
	changed chan struct{} // closed and replaced whenever a lease ends or changes hands
}

// LeaseState says whether a lease's owner uses its port or gave it away.
type LeaseState string

// Lease states.
const (
	// LeaseHeld: the owner uses the port.
	LeaseHeld LeaseState = "held"
	// LeaseReleased: the owner gave the port to another program and may
	// take it back.
	LeaseReleased LeaseState = "released"
)

// Lease is who holds a port, a copy: changing it changes nothing.
type Lease struct {
	// Key is the port, as LeaseKey gives it.
	Key string `json:"key"`
	// Owner is who holds it: an MCP session id, a pool run.
	Owner string     `json:"owner"`
	State LeaseState `json:"state"`
	// Note says what for, for people: "console_hold", "pool run 3".
	Note string `json:"note,omitempty"`
	// Since is when the owner took the lease; Changed when it last went
	// from held to released or back.
	Since   time.Time `json:"since"`
	Changed time.Time `json:"changed"`
	// Expires is when the lease lapses unless renewed; zero means never.
	Expires time.Time `json:"expires,omitzero"`

	// prior is the held lease that Release turned into this released
	// one: taking the port back (TakeBackConsole), or this lease lapsing,
	// restores it, so a hand-over does not end the owner's hold.
	prior *Lease
}

// ErrLeased is wrapped by the error of a call on a port whose lease another
// owner holds.
var ErrLeased = errors.New("port leased")

// LeaseError says who holds a port that a caller wanted.
type LeaseError struct {
	Lease Lease
	// Waited is how long the caller waited for it (LeaseOptions.Wait).
	Waited time.Duration
}

func (e *LeaseError) Error() string {
	l := e.Lease
	msg := fmt.Sprintf("%s is %s by %s since %s", l.Key, l.State, l.Owner, l.Since.Format("15:04:05.000"))
	if l.State == LeaseReleased {
		msg = fmt.Sprintf("%s is released for another program by %s since %s, and only it may take the port back", l.Key, l.Owner, l.Changed.Format("15:04:05.000"))
	}
	if l.Note != "" {
		msg += " (" + l.Note + ")"
	}
	if !l.Expires.IsZero() {
		msg += "; the lease lapses at " + l.Expires.Format("15:04:05.000") + " unless renewed"
	}
	if e.Waited > 0 {
		msg += fmt.Sprintf("; waited %s", e.Waited.Round(time.Millisecond))
	}
	return msg
}

// Unwrap makes errors.Is(err, ErrLeased) true.
func (e *LeaseError) Unwrap() error { return ErrLeased }

// LeaseOptions say how a lease is taken.
type LeaseOptions struct {
	// TTL is how long the lease lasts from now unless renewed (by taking it
	// again); 0 means until it is dropped.
	TTL time.Duration
	// Wait is how long to wait while another owner holds the port; 0 fails
	// at once with a *LeaseError. The context bounds it too.
	Wait time.Duration
	// Note says what for, for the message others get.
	Note string
}

// NewLeases returns an empty lease table.
func NewLeases() *Leases {
	return &Leases{m: map[string]*Lease{}, changed: make(chan struct{})}
}

// LeaseKey is the key of the port at path: the absolute path its symbolic
// links lead to, so that /dev/serial/by-id/..., ../../dev/ttyACM0 and
// /dev/ttyACM0 share one lease. A path that does not resolve is its
// absolute self, and a network port URL its canonical spelling
// (CanonicalPort).
func LeaseKey(path string) string {
	canon, err := steps.CanonicalPort(path)
	if err != nil {
		return path
	}
	if steps.NetworkPort(canon) {
		return canon
	}
	if r, err := filepath.EvalSymlinks(canon); err == nil {
		return r
	}
	return canon
}

func (t *Leases) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// liveLocked returns key's lease unless it has expired, in which case it
// is removed.
func (t *Leases) liveLocked(key string, now time.Time) *Lease {
	l := t.m[key]
	if l != nil && !l.Expires.IsZero() && !now.Before(l.Expires) {
		if p := l.prior; p != nil && (p.Expires.IsZero() || now.Before(p.Expires)) {
			// The release lapsed; the hold under it did not.
			*l = *p
			l.Changed = now
			t.signalLocked()
			return l
		}
		delete(t.m, key)
		t.signalLocked()
		return nil
	}
	return l
}

func (t *Leases) signalLocked() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// Hold takes key for owner, held, or renews owner's lease of it (a released
// lease becomes held; its TTL starts again; Since stays). While another
// owner's lease is live it waits up to opt.Wait, then fails with a
// *LeaseError.
func (t *Leases) Hold(ctx context.Context, key, owner string, opt LeaseOptions) (Lease, error) {
	return t.set(ctx, key, owner, LeaseHeld, opt)
}

// Lock is Hold for a lock that outlasts hand-overs (the MCP acquire_lock):
// while owner's lease of key is released, it takes or renews the hold
// under the release, which taking the port back restores, and the lease
// stays released; otherwise it is Hold.
func (t *Leases) Lock(ctx context.Context, key, owner string, opt LeaseOptions) (Lease, error) {
	t.mu.Lock()
	now := t.now()
	if l := t.liveLocked(key, now); l != nil && l.Owner == owner && l.State == LeaseReleased {
		p := l.prior
		if p == nil || (!p.Expires.IsZero() && !now.Before(p.Expires)) {
			p = &Lease{Key: key, Owner: owner, State: LeaseHeld, Since: now, Changed: l.Changed}
		}
		if opt.Note != "" {
			p.Note = opt.Note
		}
		p.Expires = time.Time{}
		if opt.TTL > 0 {
			p.Expires = now.Add(opt.TTL)
		}
		l.prior = p
		out := *p
		t.mu.Unlock()
		return out, nil
	}
	t.mu.Unlock()
	return t.Hold(ctx, key, owner, opt)
}

// Unlock ends what Lock took: the hold under owner's released lease of
// key (the release stays), or else owner's lease, as Drop does. It reports
// whether there was one.
func (t *Leases) Unlock(key, owner string) bool {
	t.mu.Lock()
	l := t.liveLocked(key, t.now())
	if l != nil && l.Owner == owner && l.State == LeaseReleased {
		had := l.prior != nil
		l.prior = nil
		t.mu.Unlock()
		return had
	}
	t.mu.Unlock()
	return t.Drop(key, owner)
}

// Release marks owner's lease of key released (taking it first, as Hold
// does, when owner has none): the port is given to another program and
// owner keeps the right to take it back. It only records the fact;
// ReleaseConsole also lets go of the port.
func (t *Leases) Release(ctx context.Context, key, owner string, opt LeaseOptions) (Lease, error) {
	return t.set(ctx, key, owner, LeaseReleased, opt)
}

func (t *Leases) set(ctx context.Context, key, owner string, state LeaseState, opt LeaseOptions) (Lease, error) {
	if owner == "" {
		return Lease{}, fmt.Errorf("lease %s: no owner", key)
	}
	start := time.Now()
	var timer <-chan time.Time
	if opt.Wait > 0 {
		tm := time.NewTimer(opt.Wait)
		defer tm.Stop()
		timer = tm.C
	}
	for {
		t.mu.Lock()
		now := t.now()
		l := t.liveLocked(key, now)
		if l == nil || l.Owner == owner {
			if l == nil {
				l = &Lease{Key: key, Owner: owner, Since: now, Changed: now}
				t.m[key] = l
			}
			if l.State != state {
				l.Changed = now
				if state == LeaseReleased && l.State == LeaseHeld {
					p := *l
					l.prior = &p
				} else {
					l.prior = nil
				}
			}
			l.State = state
			if opt.Note != "" {
				l.Note = opt.Note
			}
			l.Expires = time.Time{}
			if opt.TTL > 0 {
				l.Expires = now.Add(opt.TTL)
			}
			out := *l
			t.mu.Unlock()
			return out, nil
		}
		busy := &LeaseError{Lease: *l}
		changed := t.changed
		t.mu.Unlock()
		if timer == nil {
			return Lease{}, busy
		}
		// An expiry is not signalled when it happens; look again at the
		// latest when the lease is due to lapse.
		var lapse <-chan time.Time
		stop := func() bool { return false }
		if !busy.Lease.Expires.IsZero() {
			lt := time.NewTimer(max(busy.Lease.Expires.Sub(now), time.Millisecond))
			lapse, stop = lt.C, lt.Stop
		}
		select {
		case <-changed:
		case <-lapse:
		case <-timer:
			stop()
			busy.Waited = time.Since(start)
			return Lease{}, busy
		case <-ctx.Done():
			stop()
			return Lease{}, fmt.Errorf("waiting for the lease of %s: %w (%w)", key, ctx.Err(), busy)
		}
		stop()
	}
}

// Drop ends owner's lease of key; it reports whether there was one. A lease
// of another owner stays.
func (t *Leases) Drop(key, owner string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.liveLocked(key, t.now())
	if l == nil || l.Owner != owner {
		return false
	}
	delete(t.m, key)
	t.signalLocked()
	return true
}

// DropKey ends key's lease, whoever holds it, as closing the port's
// console does; it reports whether there was one.
func (t *Leases) DropKey(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.liveLocked(key, t.now()) == nil {
		return false
	}
	delete(t.m, key)
	t.signalLocked()
	return true
}

// DropOwner ends every lease of owner, as the end of its session does, and
// returns them.
func (t *Leases) DropOwner(owner string) []Lease {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []Lease
	for k, l := range t.m {
		if l.Owner == owner {
			out = append(out, *l)
			delete(t.m, k)
		}
	}
	if len(out) > 0 {
		t.signalLocked()
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// Get returns the live lease of key.
func (t *Leases) Get(key string) (Lease, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.liveLocked(key, t.now())
	if l == nil {
		return Lease{}, false
	}
	return *l, true
}

// Check returns nil when owner may use key now: nobody holds a live lease
// of it, or owner does. Else a *LeaseError names the holder.
func (t *Leases) Check(key, owner string) error {
	l, ok := t.Get(key)
	if !ok || l.Owner == owner {
		return nil
	}
	return &LeaseError{Lease: l}
}

// List returns the live leases, by key.
func (t *Leases) List() []Lease {
	t.mu.Lock()
	defer t.mu.Unlock()
	now := t.now()
	var out []Lease
	for k := range t.m {
		if l := t.liveLocked(k, now); l != nil {
			out = append(out, *l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out
}

// HandOver is a console that can let go of its port and take it back:
// *Console.
type HandOver interface {
	Path() string
	Release(ctx context.Context) error
	Reacquire(ctx context.Context, opt ReacquireOptions) error
}

// ReleaseConsole records owner's lease of c's port as released (see
// Release) and lets go of the port: it returns once the descriptor is
// closed and the lock file removed, so another program can open the port
// the moment it returns. The console keeps its buffer, cursors and log.
// When another owner holds the port, nothing happens and the error is a
// *LeaseError. When the console cannot let go, the lease is as it was.
func (t *Leases) ReleaseConsole(ctx context.Context, c HandOver, owner string, opt LeaseOptions) (Lease, error) {
	key := LeaseKey(c.Path())
	before, had := t.Get(key)
	l, err := t.Release(ctx, key, owner, opt)
	if err != nil {
		return Lease{}, err
	}
	if err := c.Release(ctx); err != nil {
		t.restore(key, owner, before, had)
		return Lease{}, err
	}
	return l, nil
}

// HoldConsole takes (or renews) owner's lease of c's port, held, and takes
// the port back when the console had let go of it (see
// Console.Reacquire, which waits, up to ro.Timeout, while another program
// still has it open or locked). The console's cursor and log go on from
// where they stopped. When another owner holds the port, nothing happens
// and the error is a *LeaseError; when the port cannot be taken back, the
// lease is as it was.
func (t *Leases) HoldConsole(ctx context.Context, c HandOver, owner string, opt LeaseOptions, ro ReacquireOptions) (Lease, error) {
	key := LeaseKey(c.Path())
	before, had := t.Get(key)
	l, err := t.Hold(ctx, key, owner, opt)
	if err != nil {
		return Lease{}, err
	}
	if err := c.Reacquire(ctx, ro); err != nil {
		t.restore(key, owner, before, had)
		return Lease{}, err
	}
	return l, nil
}

// TakeBackConsole takes back the port of c, which owner released with
// ReleaseConsole (see Console.Reacquire, which waits, up to ro.Timeout,
// while another program still has it open or locked), and puts owner's
// lease back as it was before the release: held, as Hold left it, or none.
// A console nobody holds a lease of is taken back for anyone (its releaser
// ended). When another owner holds the port, nothing happens and the error
// is a *LeaseError; when the port cannot be taken back, the lease is as it
// was. It returns the lease after, if any.
func (t *Leases) TakeBackConsole(ctx context.Context, c HandOver, owner string, ro ReacquireOptions) (Lease, bool, error) {
	key := LeaseKey(c.Path())
	if err := t.Check(key, owner); err != nil {
		return Lease{}, false, err
	}
	if err := c.Reacquire(ctx, ro); err != nil {
		return Lease{}, false, err
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.liveLocked(key, t.now())
	if l == nil || l.Owner != owner || l.State != LeaseReleased {
		if l == nil || l.Owner != owner {
			return Lease{}, false, nil
		}
		return *l, true, nil
	}
	if l.prior == nil {
		delete(t.m, key)
		t.signalLocked()
		return Lease{}, false, nil
	}
	*l = *l.prior
	l.Changed = t.now()
	t.signalLocked()
	return *l, true, nil
}

// restore puts owner's lease of key back as it was before a hand-over that
// failed.
func (t *Leases) restore(key, owner string, before Lease, had bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	l := t.m[key]
	if l == nil || l.Owner != owner {
		return
	}
	if had && before.Owner == owner {
		*l = before
	} else {
		delete(t.m, key)
	}
	t.signalLocked()
}

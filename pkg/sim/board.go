// Package sim is hilrun's virtual board: a simulated embedded target that
// lets hilrun run, and be tested, without hardware.
//
// A Board opens a pty pair and runs a small firmware-like shell on the
// device side; a client opens SerialPath like any serial port. The shell
// reads and writes a Memory, the board's memory map, which a debugger can
// reach as well. A Camera serves pictures of the board, its LED lit or dark,
// over HTTP the way an IP camera does.
package sim

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// Options configures a Board. The zero value is a usable configuration.
type Options struct {
	// Prompt is printed after each reply, with no line ending after it.
	// "" means "sim> ".
	Prompt string
	// LineEnding is the line ending of everything the board prints: "crlf"
	// (the default when ""), "lf" or "cr".
	LineEnding string
	// Latency is how long the board waits before replying to each
	// non-empty command line; 0 replies at once.
	Latency time.Duration
	// Echo makes the board echo what it receives, like a firmware shell with
	// echo on: printable bytes as received, a line end as the line ending,
	// a backspace as "\b \b".
	Echo bool
	// Link, if not "", is the path of a symbolic link the board keeps
	// pointing at its current pty slave, like a /dev/serial/by-id entry. It
	// is replaced atomically when a new pty appears and removed on Unplug
	// and Close.
	Link string
	// Version is printed by the `version` command and in the banner. ""
	// means "hilrun-sim 1.0.0".
	Version string
	// RealtimeRx reads the console on a thread of its own at real-time
	// priority (SCHED_FIFO), when the process may (Linux, CAP_SYS_NICE),
	// so that each received line is stamped when it arrived, as a UART
	// interrupt would stamp it, and not when a busy machine got round to
	// the board. For benchmarks; without the privilege it reads as usual.
	RealtimeRx bool
}

// DefaultPrompt and DefaultVersion are used when Options leaves them empty.
const (
	DefaultPrompt  = "sim> "
	DefaultVersion = "hilrun-sim 1.0.0"
)

// BannerTitle is the first line of the boot banner.
const BannerTitle = "hilrun virtual board"

// RxLine is one line the board received. At is time.Now() when the read
// holding its line end returned, monotonic reading included. Line excludes
// the line end.
type RxLine struct {
	At   time.Time
	Line string
}

// Board is a virtual board: a firmware-like shell on a pty, over a Memory.
// Its methods are safe for concurrent use.
type Board struct {
	opts Options
	mem  *Memory

	// life serialises Start, Unplug, Replug and Close, which wait for the
	// session's goroutines while holding it.
	life     sync.Mutex
	started  bool
	closed   bool
	sess     *session
	lastPath string

	ptyPath atomic.Pointer[string]

	rxMu    sync.Mutex
	rx      ring[RxLine]
	rxHooks hooks[RxLine]

	camMu sync.Mutex
	cams  map[*Camera]struct{} // started and not yet closed

	flaky flakyCalls
}

// New returns a board configured by opts. It opens nothing until Start.
func New(opts Options) *Board {
	if opts.Prompt == "" {
		opts.Prompt = DefaultPrompt
	}
	if opts.LineEnding == "" {
		opts.LineEnding = "crlf"
	}
	if opts.Version == "" {
		opts.Version = DefaultVersion
	}
	return &Board{
		opts: opts,
		mem:  NewMemory(),
		rx:   ring[RxLine]{max: logLimit},
	}
}

// Start powers the board on: it opens a pty, puts the memory map in its
// power-on state, starts the shell and prints the boot banner followed by
// the prompt. Output written before a client opens the pty waits in the
// kernel's buffer. Start fails if the board was started or closed before.
func (b *Board) Start() error {
	b.life.Lock()
	defer b.life.Unlock()
	if b.closed {
		return errors.New("start board: board is closed")
	}
	if b.started {
		return errors.New("start board: already started")
	}
	if _, err := lineEndingBytes(b.opts.LineEnding); err != nil {
		return fmt.Errorf("start board: %w", err)
	}
	if err := b.plug(); err != nil {
		return fmt.Errorf("start board: %w", err)
	}
	b.started = true
	return nil
}

// SerialPath returns the path a client opens: Options.Link if set, else the
// current pty slave (see PtyPath).
func (b *Board) SerialPath() string {
	if b.opts.Link != "" {
		return b.opts.Link
	}
	return b.PtyPath()
}

// PtyPath returns the current pty slave, such as /dev/pts/3, or "" while the
// board is not started, unplugged or closed.
func (b *Board) PtyPath() string {
	if p := b.ptyPath.Load(); p != nil {
		return *p
	}
	return ""
}

// Memory returns the board's memory map, the one the shell uses.
func (b *Board) Memory() *Memory {
	return b.mem
}

// LED reports whether the LED is on, from the LED pin of GPIOODR.
func (b *Board) LED() bool {
	return b.mem.LED()
}

// Received returns the newest lines the board received (at most 100000),
// oldest first, empty lines included.
func (b *Board) Received() []RxLine {
	b.rxMu.Lock()
	defer b.rxMu.Unlock()
	return b.rx.snapshot()
}

// OnReceive registers fn to be called as each line arrives, before the
// shell acts on it. fn runs on the board's input goroutine: it must return
// quickly and must not call Unplug, Replug or Close. The returned function
// unregisters fn; it may be called more than once.
func (b *Board) OnReceive(fn func(RxLine)) (remove func()) {
	return b.rxHooks.add(fn)
}

// Unplug makes the device disappear: it stops the shell, closes both ends of
// the pty so a client reading the slave gets an error, and removes
// Options.Link. Unplugging an unplugged board does nothing.
func (b *Board) Unplug() error {
	b.life.Lock()
	defer b.life.Unlock()
	if b.closed {
		return errors.New("unplug board: board is closed")
	}
	if !b.started {
		return errors.New("unplug board: not started")
	}
	if err := b.unplug(); err != nil {
		return fmt.Errorf("unplug board: %w", err)
	}
	return nil
}

// Replug makes the device appear again: a new pty with a path different
// from the previous one, Options.Link pointed at it, the memory map back to
// its power-on state and the boot banner printed again. Replugging a board
// that is plugged in unplugs it first.
func (b *Board) Replug() error {
	b.life.Lock()
	defer b.life.Unlock()
	if b.closed {
		return errors.New("replug board: board is closed")
	}
	if !b.started {
		return errors.New("replug board: not started")
	}
	if err := b.unplug(); err != nil {
		return fmt.Errorf("replug board: %w", err)
	}
	if err := b.plug(); err != nil {
		return fmt.Errorf("replug board: %w", err)
	}
	return nil
}

// Close closes the board's cameras, stops the shell, closes the pty and
// removes Options.Link. It may be called more than once and before Start;
// calls after the first return nil.
func (b *Board) Close() error {
	b.life.Lock()
	defer b.life.Unlock()
	if b.closed {
		return nil
	}
	b.closed = true
	err := errors.Join(b.closeCameras(), b.unplug())
	if err != nil {
		return fmt.Errorf("close board: %w", err)
	}
	return nil
}

// plug opens a new pty and starts a session on it. b.life must be held.
func (b *Board) plug() error {
	master, slave, path, err := b.openFreshPTY()
	if err != nil {
		return err
	}
	if b.opts.Link != "" {
		if err := pointLink(b.opts.Link, path); err != nil {
			master.Close()
			slave.Close()
			return err
		}
	}
	b.mem.Reset()
	b.sess = startSession(b, master, slave)
	b.lastPath = path
	b.ptyPath.Store(&path)
	return nil
}

// openFreshPTY opens a pty whose path differs from the previous one, as a
// re-enumerated device would; the kernel otherwise hands out the lowest free
// number again. Holding the first pty open while opening a second forces a
// new number.
func (b *Board) openFreshPTY() (master, slave *os.File, path string, err error) {
	master, slave, path, err = openPTY()
	if err != nil || b.lastPath == "" || path != b.lastPath {
		return master, slave, path, err
	}
	m2, s2, p2, err := openPTY()
	master.Close()
	slave.Close()
	return m2, s2, p2, err
}

// unplug ends the current session, if any. b.life must be held.
func (b *Board) unplug() error {
	s := b.sess
	if s == nil {
		return nil
	}
	b.sess = nil
	b.ptyPath.Store(nil)
	err := s.stop()
	if b.opts.Link != "" {
		if rerr := os.Remove(b.opts.Link); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = errors.Join(err, fmt.Errorf("remove link: %w", rerr))
		}
	}
	return err
}

// received records a line and calls the OnReceive hooks.
func (b *Board) received(l RxLine) {
	b.rxMu.Lock()
	b.rx.add(l)
	b.rxMu.Unlock()
	b.rxHooks.call(l)
}

var linkSeq atomic.Uint64

// pointLink makes link a symbolic link to target, replacing any file there
// atomically: readers see the old target or the new one, never no link.
func pointLink(link, target string) error {
	tmp := filepath.Join(filepath.Dir(link),
		"."+filepath.Base(link)+".tmp-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatUint(linkSeq.Add(1), 10))
	if err := os.Symlink(target, tmp); err != nil {
		return fmt.Errorf("point %s at %s: %w", link, target, err)
	}
	if err := os.Rename(tmp, link); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("point %s at %s: %w", link, target, err)
	}
	return nil
}

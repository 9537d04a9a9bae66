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
	"slices"
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
	// Consoles is how many consoles the board has, each a shell on a pty
	// of its own over the one memory map; 0 means 1. A `tx TEXT` on one
	// console arrives on every other as `rx TEXT` (see radio.go). Link
	// follows the first console only.
	Consoles int
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
// the line end. Console is the console it arrived on, from 0.
type RxLine struct {
	At      time.Time
	Line    string
	Console int
}

// Board is a virtual board: a firmware-like shell on a pty, over a Memory.
// Its methods are safe for concurrent use.
type Board struct {
	opts Options
	mem  *Memory

	// life serialises Start, Unplug, Replug and Close, which wait for the
	// session's goroutines while holding it.
	life      sync.Mutex
	started   bool
	closed    bool
	sess      []*session
	lastPaths []string

	// live and ptyPaths are the sessions and pty slaves of the consoles
	// while plugged in (nil otherwise), for readers that do not hold life.
	live     atomic.Pointer[[]*session]
	ptyPaths atomic.Pointer[[]string]
	// hung is set by the hang command and cleared by a reset or a power
	// cycle (see hang.go).
	hung atomic.Bool

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
	if opts.Consoles < 1 {
		opts.Consoles = 1
	}
	b := &Board{
		opts: opts,
		mem:  NewMemory(),
		rx:   ring[RxLine]{max: logLimit},
	}
	b.mem.OnReset(b.rebootIfHung)
	return b
}

// Start powers the board on: it opens a pty for each console, puts the memory map in its
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

// PtyPath returns the current pty slave of the first console, such as
// /dev/pts/3, or "" while the board is not started, unplugged or closed.
func (b *Board) PtyPath() string {
	return b.ConsolePtyPath(0)
}

// Consoles is how many consoles the board has (Options.Consoles).
func (b *Board) Consoles() int { return b.opts.Consoles }

// ConsolePath returns the path a client opens for console i (from 0):
// SerialPath for the first, the current pty slave for the others; "" for
// a console the board does not have, or while it is not plugged in.
func (b *Board) ConsolePath(i int) string {
	if i == 0 {
		return b.SerialPath()
	}
	return b.ConsolePtyPath(i)
}

// ConsolePtyPath returns the current pty slave of console i (from 0), or
// "" as ConsolePath.
func (b *Board) ConsolePtyPath(i int) string {
	if p := b.ptyPaths.Load(); p != nil && i >= 0 && i < len(*p) {
		return (*p)[i]
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

// Replug makes the device appear again, as a power cycle does: a new pty
// for each console with a path different from the previous ones,
// Options.Link pointed at the first, the memory map back to its power-on
// state, a hang over and the boot banner printed again. Replugging a board
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

// plug opens a new pty for each console and starts a session on it: the
// board powers on, hang forgotten. b.life must be held.
func (b *Board) plug() error {
	ptys, err := b.openFreshPTYs(b.opts.Consoles)
	if err != nil {
		return err
	}
	if b.opts.Link != "" {
		if err := pointLink(b.opts.Link, ptys[0].path); err != nil {
			for _, p := range ptys {
				p.close()
			}
			return err
		}
	}
	b.hung.Store(false)
	b.mem.Reset()
	sess := make([]*session, len(ptys))
	paths := make([]string, len(ptys))
	for i, p := range ptys {
		sess[i] = startSession(b, i, p.master, p.slave)
		paths[i] = p.path
	}
	b.sess, b.lastPaths = sess, paths
	b.live.Store(&sess)
	b.ptyPaths.Store(&paths)
	return nil
}

// ptyPair is an open pty: master, slave and the slave's path.
type ptyPair struct {
	master, slave *os.File
	path          string
}

func (p ptyPair) close() {
	p.master.Close()
	p.slave.Close()
}

// openFreshPTYs opens n ptys whose paths differ from the previous ones, as
// a re-enumerated device's would; the kernel otherwise hands out the lowest
// free numbers again. Holding a refused pty open while opening the next
// forces a new number.
func (b *Board) openFreshPTYs(n int) ([]ptyPair, error) {
	var got, refused []ptyPair
	defer func() {
		for _, p := range refused {
			p.close()
		}
	}()
	for len(got) < n {
		m, s, path, err := openPTY()
		if err != nil {
			for _, p := range got {
				p.close()
			}
			return nil, err
		}
		p := ptyPair{master: m, slave: s, path: path}
		if slices.Contains(b.lastPaths, path) {
			refused = append(refused, p)
			continue
		}
		got = append(got, p)
	}
	return got, nil
}

// unplug ends the current sessions, if any. b.life must be held.
func (b *Board) unplug() error {
	sess := b.sess
	if sess == nil {
		return nil
	}
	b.sess = nil
	b.live.Store(nil)
	b.ptyPaths.Store(nil)
	var err error
	for _, s := range sess {
		err = errors.Join(err, s.stop())
	}
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

// Package serialx runs hilrun's serial consoles: a port opened with
// go.bug.st/serial, or a network port (tcp://, rfc2217://; see net.go)
// behind the same interface, a goroutine that reads it continuously into a
// stream.Buffer and a log, so that no byte is lost between steps, and
// detection of (and optionally recovery from) a device that disconnects.
package serialx

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"go.bug.st/serial"

	"github.com/hilrun/hilrun/pkg/stream"
)

const (
	// readTimeout bounds each read of the port, so the reader never sits
	// in one system call for long.
	readTimeout = 100 * time.Millisecond
	// reconnectInterval is how often a disconnected console with
	// Reconnect tries to reopen its port.
	reconnectInterval = 150 * time.Millisecond
	// writeChunk bounds one write system call, so that a cancelled
	// context is noticed between chunks of a long write.
	writeChunk = 1024
)

// Stats describes a console's traffic and state.
type Stats struct {
	RxBytes, TxBytes int64
	// Connected is false after the device disconnected and before it was
	// reopened, and after Close.
	Connected bool
	// Reconnects counts successful reopenings after a disconnection (not
	// after Release).
	Reconnects int
	// Released is true between Release and a successful Reacquire.
	Released bool
	// Err is the current disconnection or close error, else the first log
	// write error, else "".
	Err string
}

// Console is an open serial console. Its methods are safe for concurrent
// use.
type Console struct {
	name   string
	cfg    Config
	mode   *serial.Mode
	buf    *stream.Buffer
	log    *consoleLog
	opened time.Time

	// mu guards port, lock, rd, base, path and levels. Writers hold it for
	// reading during each write system call, and modem control during
	// each ioctl; replacing or closing the port takes it for writing, so
	// no write or ioctl reaches a closed descriptor.
	mu     sync.RWMutex
	port   serial.Port // nil while disconnected or released and after Close
	lock   *portLock   // the UUCP lock of port, nil when none
	rd     *reader     // the reader of port; nil while released
	base   int64       // the stream offset of port's first byte (see CatchUp)
	path   string
	levels lineLevels // of port's DTR and RTS: as last set, else as assumed at open

	lockDir   string // "" when the console takes no lock
	listPorts func() ([]PortInfo, error)
	wmu       sync.Mutex
	warned    map[string]bool

	ctx       context.Context // cancelled by Close; bounds Resolve
	cancel    context.CancelFunc
	closing   atomic.Bool
	closeOnce sync.Once
	closeErr  error
	wsem      chan struct{} // serializes writes and modem control
	hsem      chan struct{} // serializes Release, Reacquire and Close

	released atomic.Bool
	follow   *USBMatch // the USB identity to reacquire by; guarded by hsem
	gmu      sync.Mutex
	gaps     []Gap // guarded by gmu

	rx, tx     atomic.Int64
	connected  atomic.Bool
	reconnects atomic.Int64
	opens      atomic.Int64 // see Opens
	// away is the last disconnection that Reconnect has not yet made
	// good: its time and error; nil while connected.
	away atomic.Pointer[awayFrom]

	// mask hides the secrets in what arrives; nil when there are none.
	mask *masker

	rmu       sync.Mutex
	receivers atomic.Pointer[[]*receiver]

	// notes are the OnConnection listeners, by id.
	nmu      sync.Mutex
	notes    map[int]func(time.Time, string, string)
	nextNote int
}

type receiver struct {
	fn func(at time.Time, off int64, p []byte)
}

// Open opens the console's port, configures it and starts reading. name
// identifies the console in logs and file names. On error Open returns a
// nil *Console and, for a port that cannot be opened or configured, an
// *OpenError.
func Open(ctx context.Context, name string, cfg Config) (*Console, error) {
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("open console %q: %w", name, err)
	}
	mode, err := cfg.mode()
	if err != nil {
		return nil, &OpenError{Path: cfg.Path, Kind: Invalid, Err: err}
	}
	path := cfg.Path
	if path == "" {
		if cfg.Resolve == nil {
			return nil, &OpenError{Kind: Invalid, Err: fmt.Errorf("console %q has no port path", name)}
		}
		if path, err = cfg.Resolve(ctx); err != nil {
			return nil, fmt.Errorf("find port of console %q: %w", name, err)
		}
	}
	c := &Console{
		name:      name,
		cfg:       cfg,
		mode:      mode,
		buf:       stream.NewBuffer(cfg.BufferSize),
		path:      path,
		listPorts: ListPorts,
		wsem:      make(chan struct{}, 1),
		hsem:      make(chan struct{}, 1),
		mask:      newMasker(cfg),
	}
	c.receivers.Store(&[]*receiver{})
	c.lockDir = c.findLockDir()
	port, lock, err := c.openPort(ctx, path)
	if err != nil {
		return nil, err
	}
	c.opened = time.Now()
	if cfg.LogDir != "" {
		if c.log, err = openLog(cfg.LogDir, name, c.opened); err != nil {
			port.Close()
			lock.release()
			return nil, fmt.Errorf("open console %q: %w", name, err)
		}
		c.log.warn = c.warn
	}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.mu.Lock()
	c.port, c.lock, c.levels = port, lock, c.openLevels()
	c.connected.Store(true)
	c.opens.Add(1)
	c.startReaderLocked(port)
	c.mu.Unlock()
	return c, nil
}

func (c *Console) warn(msg string) {
	if c.cfg.Warn == nil {
		return
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.warned[msg] {
		return
	}
	if c.warned == nil {
		c.warned = map[string]bool{}
	}
	c.warned[msg] = true
	c.cfg.Warn(msg)
}

// Name returns the console's name.
func (c *Console) Name() string { return c.name }

// Path returns the device path currently in use; it changes when Resolve
// finds the device elsewhere after a reconnection.
func (c *Console) Path() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.path
}

// Expect waits for one of want in the output at or after cursor from; see
// stream.Buffer.Expect.
func (c *Console) Expect(ctx context.Context, from int64, want, failOn []stream.Pattern) (stream.Match, error) {
	return c.buf.Expect(ctx, from, want, failOn)
}

// Capture collects output from cursor from; see stream.Buffer.Capture.
func (c *Console) Capture(ctx context.Context, from int64, opt stream.CaptureOptions) (stream.Capture, error) {
	return c.buf.Capture(ctx, from, opt)
}

// Cursor returns the offset just past the last byte received.
func (c *Console) Cursor() int64 { return c.buf.End() }

// Read returns a copy of the retained output from cursor from, at most max
// bytes; see stream.Buffer.Read.
func (c *Console) Read(from int64, max int) (data []byte, start, next int64) {
	return c.buf.Read(from, max)
}

// Tail returns the last lines of output, at most maxBytes, for messages.
func (c *Console) Tail(lines, maxBytes int) []byte { return c.buf.Tail(lines, maxBytes) }

// Watch reports every occurrence of patterns in output received from now
// on; see stream.Buffer.Watch. fn runs on the reader goroutine with the
// match buffer locked: it must not block or call the Console's methods
// (other than the returned cancel); record the hit or cancel a context.
func (c *Console) Watch(patterns []stream.Pattern, fn func(stream.Hit)) (cancel func()) {
	return c.buf.Watch(patterns, fn)
}

// OnReceive calls fn with every chunk received from now on, in order, on
// the reader goroutine, after the chunk was logged and before Expect,
// Capture or Read can see it. off is the chunk's stream offset; p is valid
// only during the call. fn must not block or call Close. remove stops the
// calls and is idempotent.
func (c *Console) OnReceive(fn func(at time.Time, off int64, p []byte)) (remove func()) {
	r := &receiver{fn: fn}
	c.rmu.Lock()
	list := append(append([]*receiver{}, *c.receivers.Load()...), r)
	c.receivers.Store(&list)
	c.rmu.Unlock()
	return func() {
		c.rmu.Lock()
		defer c.rmu.Unlock()
		var list []*receiver
		for _, x := range *c.receivers.Load() {
			if x != r {
				list = append(list, x)
			}
		}
		c.receivers.Store(&list)
	}
}

// Opens counts the times the console has opened its port: 1 after Open,
// and one more for each reconnect and each Reacquire. A new count means a
// fresh connection, to a device that may have reset meanwhile.
func (c *Console) Opens() int64 { return c.opens.Load() }

// Stats returns the console's counters and state.
func (c *Console) Stats() Stats {
	s := Stats{
		RxBytes:    c.rx.Load(),
		TxBytes:    c.tx.Load(),
		Connected:  c.connected.Load(),
		Reconnects: int(c.reconnects.Load()),
		Released:   c.released.Load(),
	}
	if err := c.buf.Err(); err != nil {
		s.Err = err.Error()
	} else if err := c.log.writeErr(); err != nil {
		s.Err = err.Error()
	}
	return s
}

// LogPaths returns the paths of the raw log and the timeline, or "" when
// Config.LogDir was empty.
func (c *Console) LogPaths() (raw, timeline string) {
	if c.log == nil {
		return "", ""
	}
	return c.log.raw.Path, c.log.tl.Path
}

// LogErr returns nil when the raw log and the timeline hold everything, or
// else an error wrapping ErrLogWrite (a *LogWriteError per file) that says
// which file lost how many bytes, as after a full disk. Call it after Close
// for the final word: closing can fail too. A console without LogDir
// returns nil.
func (c *Console) LogErr() error { return c.log.writeErr() }

// Close stops the reader, closes the port, removes its lock file and
// closes the logs. Expect and Capture calls waiting on the console return an
// error wrapping ErrClosed; a Reacquire in progress stops. Close is
// idempotent; later calls return nil.
func (c *Console) Close() error {
	first := false
	c.closeOnce.Do(func() {
		first = true
		c.closing.Store(true)
		c.cancel()
		// Let a Release or Reacquire in progress finish (the cancel stops
		// a Reacquire's wait, and a Release's wait for the write turn),
		// so the port is not closed under it. The turns are taken in
		// Release's order: hand-over, then write.
		c.hsem <- struct{}{}
		defer func() { <-c.hsem }()
		// What was written leaves first; a write held up by flow control
		// would keep mu. The write turn is Close's from here on: later
		// writes find the port closed.
		discarded := c.takeWriteTurn()
		defer func() { <-c.wsem }()
		settleErr := c.settleOutput()
		if discarded > 0 {
			settleErr = errors.Join(&DiscardError{Path: c.Path(), N: discarded}, settleErr)
		}

		c.mu.Lock()
		port, lock, rd := c.port, c.lock, c.rd
		c.port, c.lock = nil, nil
		if rd != nil {
			rd.halt()
		}
		c.connected.Store(false)
		c.buf.SetErr(fmt.Errorf("%s: %w", c.path, ErrClosed))
		c.mu.Unlock()
		errs := []error{settleErr}
		if port != nil {
			if err := port.Close(); err != nil {
				errs = append(errs, fmt.Errorf("close %s: %w", c.Path(), err))
			}
		}
		if rd != nil {
			<-rd.done
		}
		c.flushHeld(true)
		lock.release()
		c.log.close()
		c.closeErr = errors.Join(errs...)
	})
	if !first {
		return nil
	}
	return c.closeErr
}

package serialx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.bug.st/serial"
	"golang.org/x/sys/unix"
)

// pollPort is a go.bug.st/serial port whose reads and writes wait in Go's
// poller (epoll) rather than on a blocked thread. The library reads with a
// select and then a read system call per read, on a thread that blocks in
// the kernel; a woken reader then waits for the Go scheduler to give it a
// processor back, and hands each chunk to the goroutine waiting in Expect
// only when its thread returns. Waiting in the poller, the reader parks
// like a network connection: one read per chunk when data is waiting, and
// the goroutine it wakes runs as soon as the reader parks again.
// Everything else (line settings, modem lines, break, flushing, exclusive
// access) stays the library's.
//
// The port's descriptor itself is not registered with the poller. Go
// registers a descriptor for input and output edges both, and a tty wakes
// its output waiters whenever room frees up in its output queue: on a pty,
// every line the board reads woke one of hilrun's idle threads from
// inside the board's read system call, which on a small machine delayed
// the board's receipt of each line by tens of microseconds (BENCHMARKS.md,
// "(s), a fifth time"). Instead a private epoll instance watches the port
// for input only, and the poller waits on that instance; a second one
// watches for room to write only while a write waits for it. Linux before
// 5.7 mishandles an epoll instance inside another (before 5.5 the outer
// one reports the inner one again and again while the port stays
// readable; 5.5 and 5.6 can lose a wake-up), so there the descriptor is
// registered with the poller directly, as Go does.
//
// The duplicate shares the open file description, so the port's
// descriptor becomes non-blocking too; the library's own Read and Write are
// therefore never called.
type pollPort struct {
	serial.Port
	f       *os.File        // a duplicate of the port's descriptor, outside the poller but for direct ports
	rc      syscall.RawConn // f's: reads and writes hold it open
	in      *watch          // the port's input; nil for a direct port
	out     *watch          // room in the port's output queue, while a write waits; nil for a direct port
	wmu     sync.Mutex      // one write waits for room at a time
	aborted atomic.Bool     // set by abortWrites
	closing atomic.Bool     // set by Close: a reader inside a burst stops

	// taken counts the bytes the reads took from the driver. tmu is held
	// across each read and its count, so that arrived sees every byte
	// once: still in the driver's queue or counted.
	tmu   sync.Mutex
	taken int64

	closeOnce sync.Once
	closeErr  error
}

// noDeadline is the zero time: no deadline.
var noDeadline time.Time

// pollable returns port reading and writing through Go's poller, or port
// itself with the reason when it cannot: a port from Config.OpenPort, or a
// descriptor the poller refuses.
func pollable(port serial.Port, path string) (serial.Port, error) {
	fd, err := portFD(port)
	if err != nil {
		return port, err
	}
	p, err := newPollPort(port, fd, nestedEpoll())
	if err != nil {
		unix.SetNonblock(fd, false)
		return port, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// nestedEpoll reports whether the running kernel waits correctly on an
// epoll instance inside another: Linux 5.7 and later.
var nestedEpoll = sync.OnceValue(func() bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return false
	}
	return kernelAtLeast(unix.ByteSliceToString(u.Release[:]), 5, 7)
})

// kernelAtLeast reports whether the kernel release (uname -r, "6.1.0-18-amd64")
// is major.minor or later; false when it cannot tell.
func kernelAtLeast(release string, major, minor int) bool {
	var maj, min int
	if n, _ := fmt.Sscanf(release, "%d.%d", &maj, &min); n != 2 {
		return false
	}
	return maj > major || maj == major && min >= minor
}

// newPollPort wraps port, whose descriptor is fd. With watched, the port
// is watched for input only (see pollPort); without, the duplicate itself
// is registered with the poller.
func newPollPort(port serial.Port, fd int, watched bool) (_ *pollPort, err error) {
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("duplicate the descriptor: %w", err)
	}
	// os.NewFile registers a non-blocking descriptor with the poller; a
	// watched port's duplicate must stay out of it, and is made
	// non-blocking only afterwards.
	if err := unix.SetNonblock(dup, !watched); err != nil {
		unix.Close(dup)
		return nil, fmt.Errorf("set the descriptor's blocking mode: %w", err)
	}
	p := &pollPort{Port: port, f: os.NewFile(uintptr(dup), "port")}
	defer func() {
		if err != nil {
			p.closeWatches()
			p.f.Close()
		}
	}()
	if p.rc, err = p.f.SyscallConn(); err != nil {
		return nil, err
	}
	if !watched {
		if !inPoller(p.f) {
			return nil, errors.New("cannot be waited on by the poller")
		}
		return p, nil
	}
	if err := unix.SetNonblock(dup, true); err != nil {
		return nil, fmt.Errorf("make the descriptor non-blocking: %w", err)
	}
	if p.in, err = newWatch(dup, unix.EPOLLIN); err != nil {
		return nil, fmt.Errorf("watch for input: %w", err)
	}
	if p.out, err = newWatch(dup, 0); err != nil {
		return nil, fmt.Errorf("watch for room to write: %w", err)
	}
	return p, nil
}

// watch is an epoll instance of its own that watches one descriptor, and
// is itself registered with Go's poller: a goroutine waits for the events
// it watches for and for no others.
type watch struct {
	f      *os.File
	rc     syscall.RawConn
	target int // the watched descriptor
}

// newWatch returns a watch on fd for events; with none, fd is watched only
// from watchFor to unwatch.
func newWatch(fd int, events uint32) (*watch, error) {
	ep, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return nil, fmt.Errorf("create an epoll instance: %w", err)
	}
	if err := unix.SetNonblock(ep, true); err != nil {
		unix.Close(ep)
		return nil, fmt.Errorf("make the epoll instance non-blocking: %w", err)
	}
	// os.NewFile registers a non-blocking descriptor with the poller.
	w := &watch{f: os.NewFile(uintptr(ep), "epoll"), target: fd}
	if w.rc, err = w.f.SyscallConn(); err == nil && !inPoller(w.f) {
		err = errors.New("the epoll instance cannot be waited on by the poller")
	}
	if err == nil && events != 0 {
		err = w.watchFor(events)
	}
	if err != nil {
		w.f.Close()
		return nil, err
	}
	return w, nil
}

// inPoller reports whether f's descriptor is registered with the poller: a
// deadline can only be set on such a file.
func inPoller(f *os.File) bool {
	return !errors.Is(f.SetReadDeadline(noDeadline), os.ErrNoDeadline)
}

// watchFor starts watching the target for events (level-triggered).
func (w *watch) watchFor(events uint32) error {
	err := w.ctl(unix.EPOLL_CTL_ADD, events)
	if errors.Is(err, unix.EEXIST) { // an unwatch that failed
		err = w.ctl(unix.EPOLL_CTL_MOD, events)
	}
	return err
}

// unwatch stops watching the target.
func (w *watch) unwatch() error { return w.ctl(unix.EPOLL_CTL_DEL, 0) }

func (w *watch) ctl(op int, events uint32) error {
	var cerr error
	err := w.rc.Control(func(ep uintptr) {
		ev := unix.EpollEvent{Events: events, Fd: int32(w.target)}
		cerr = unix.EpollCtl(int(ep), op, w.target, &ev)
	})
	return errors.Join(err, cerr)
}

// wait returns when the target has one of the events watched for, or at
// once when it has one already; it fails when the watch is closed or its
// deadline passes.
func (w *watch) wait() error {
	var perr error
	err := w.rc.Read(func(ep uintptr) bool {
		var ok bool
		ok, perr = pending(int(ep))
		return ok || perr != nil
	})
	if err != nil {
		return err
	}
	return perr
}

// pending reports whether the epoll instance ep has an event to report
// (which it then consumes), without waiting.
func pending(ep int) (bool, error) {
	var evs [1]unix.EpollEvent
	for {
		n, err := unix.EpollWait(ep, evs[:], 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false, os.NewSyscallError("epoll_wait", err)
		}
		return n > 0, nil
	}
}

func (w *watch) close() error {
	if w == nil {
		return nil
	}
	return w.f.Close()
}

// Read reads what the driver has, waiting in the poller while it has
// nothing, and goes on reading while more is waiting, up to len(p): the tty
// driver hands over at most 4 KiB per read system call, and a burst passed
// on as one chunk costs one console-log write and one search, not one per
// 4 KiB. A device that went away reads as io.EOF; after Close the
// error wraps os.ErrClosed.
func (p *pollPort) Read(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	n := 0
	err := p.readBursts(b, func(c []byte) { n = len(c) }, true)
	return n, err
}

// readChunks reads until a read fails: each burst (what the driver has, up
// to len(buf)) goes to each, and the reader then waits for more. It is how
// the console reads (see chunkReader).
func (p *pollPort) readChunks(buf []byte, each func(c []byte)) error {
	return p.readBursts(buf, each, false)
}

// readBursts is readChunks; with once it returns after the first burst.
// b must not be empty.
func (p *pollPort) readBursts(b []byte, each func(c []byte), once bool) error {
	var stop bool
	var rerr error
	try := func(fd int) bool {
		stop, rerr = p.readBurst(fd, b, each, once)
		return stop
	}
	var err error
	if p.in == nil {
		// A direct port: the poller waits on the descriptor itself.
		err = p.rc.Read(func(fd uintptr) bool { return try(int(fd)) })
	} else {
		// The reads run inside the wait on the watch, so that input that
		// arrives after a read found none is seen: either by pending, or
		// by the poller, which the wait has armed before the first read.
		err = p.in.rc.Read(func(ep uintptr) bool {
			for {
				if cerr := p.rc.Control(func(fd uintptr) { try(int(fd)) }); cerr != nil {
					stop, rerr = true, p.closedErr(cerr)
				}
				if stop {
					return true
				}
				ok, perr := pending(int(ep))
				if perr != nil {
					stop, rerr = true, perr
					return true
				}
				if !ok {
					return false // wait in the poller
				}
			}
		})
	}
	if err != nil {
		return p.closedErr(err)
	}
	return rerr
}

// readBurst reads fd into b until the driver has nothing more, passing each
// burst to each. It reports whether the reader is done, and why: a failed
// read, Close, or with once the first burst.
func (p *pollPort) readBurst(fd int, b []byte, each func(c []byte), once bool) (bool, error) {
	n := 0
	// pass gives each the burst read so far, and reports whether to stop.
	pass := func() bool {
		if n == 0 {
			return false
		}
		each(b[:n])
		n = 0
		return once
	}
	for {
		if p.closing.Load() {
			// Close must not wait for a device that never lets the
			// driver run dry.
			pass()
			return true, os.ErrClosed
		}
		if n == len(b) {
			if pass() {
				return true, nil
			}
			continue
		}
		p.tmu.Lock()
		m, err := unix.Read(fd, b[n:])
		if m > 0 {
			p.taken += int64(m)
		}
		p.tmu.Unlock()
		switch {
		case err == unix.EINTR:
			continue
		case err == unix.EAGAIN:
			// Nothing more now: pass the burst on; the caller then waits.
			return pass(), nil
		case err != nil:
			pass()
			return true, os.NewSyscallError("read", err)
		case m == 0:
			// A tty whose device went away reads as end of file.
			pass()
			return true, io.EOF
		}
		n += m
	}
}

// arrived returns the bytes the reads took plus those waiting in the
// driver's input queue (TIOCINQ): the count the console's reader reaches
// once it has read what the port holds now (see Console.CatchUp).
func (p *pollPort) arrived(context.Context) (int64, error) {
	var n int64
	var ierr error
	err := p.rc.Control(func(fd uintptr) {
		p.tmu.Lock()
		defer p.tmu.Unlock()
		q, err := unix.IoctlGetInt(int(fd), unix.TIOCINQ)
		n, ierr = p.taken+int64(q), err
	})
	if err = errors.Join(err, ierr); err != nil {
		return 0, fmt.Errorf("ask the driver what it holds: %w", p.closedErr(err))
	}
	return n, nil
}

// closedErr returns err, or os.ErrClosed after Close (which is what closed
// the files err comes from).
func (p *pollPort) closedErr(err error) error {
	if p.closing.Load() {
		return fmt.Errorf("%w (%w)", os.ErrClosed, err)
	}
	return err
}

// Write writes all of b, waiting in the poller while the driver's output
// queue is full (flow control holding the line); abortWrites or Close
// ends the wait.
func (p *pollPort) Write(b []byte) (int, error) {
	if p.out == nil {
		// A direct port: the file waits in the poller itself, and
		// abortWrites sets its deadline.
		n, err := p.f.Write(b)
		if pe, ok := errors.AsType[*os.PathError](err); ok {
			err = pe.Err // the console's error names the port already
		}
		return n, err
	}
	n := 0
	for {
		if p.aborted.Load() {
			return n, os.ErrDeadlineExceeded
		}
		var werr error
		err := p.rc.Control(func(fd uintptr) {
			for n < len(b) {
				m, err := unix.Write(int(fd), b[n:])
				switch {
				case err == unix.EINTR:
					continue
				case err != nil:
					werr = err
					return
				case m == 0:
					werr = io.ErrShortWrite
					return
				}
				n += m
			}
		})
		switch {
		case err != nil:
			return n, p.closedErr(err)
		case werr == nil:
			return n, nil
		case werr == io.ErrShortWrite:
			return n, werr
		case werr != unix.EAGAIN:
			return n, os.NewSyscallError("write", werr)
		}
		if err := p.waitRoom(); err != nil {
			return n, err
		}
	}
}

// waitRoom waits until the driver's output queue has room, watching for it
// only for as long as it waits.
func (p *pollPort) waitRoom() error {
	p.wmu.Lock()
	defer p.wmu.Unlock()
	if err := p.out.watchFor(unix.EPOLLOUT); err != nil {
		return p.closedErr(err)
	}
	err := p.out.wait()
	if uerr := p.out.unwatch(); err == nil && uerr != nil {
		err = uerr
	}
	if err != nil && p.aborted.Load() {
		return os.ErrDeadlineExceeded
	}
	if err != nil {
		return p.closedErr(err)
	}
	return nil
}

// abortWrites ends a Write waiting for room in the poller, and fails every
// later one, with an error wrapping os.ErrDeadlineExceeded.
func (p *pollPort) abortWrites() {
	p.aborted.Store(true)
	if p.out == nil {
		p.f.SetWriteDeadline(time.Unix(1, 0))
		return
	}
	p.out.f.SetReadDeadline(time.Unix(1, 0))
}

// SetReadTimeout is accepted and ignored: a pollPort's Read returns when
// data arrives or the port closes, which is what the console's reader
// needs.
func (p *pollPort) SetReadTimeout(timeout time.Duration) error { return nil }

// Close closes the watches, which ends a Read or Write waiting in the
// poller, then the duplicate and the library's port.
func (p *pollPort) Close() error {
	p.closeOnce.Do(func() {
		p.closing.Store(true)
		p.closeErr = errors.Join(p.closeWatches(), p.f.Close(), p.Port.Close())
	})
	return p.closeErr
}

func (p *pollPort) closeWatches() error {
	return errors.Join(p.in.close(), p.out.close())
}

package serialx

import (
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

// pollPort is a go.bug.st/serial port whose reads and writes go through
// Go's poller (epoll) on a duplicate of the port's descriptor. The library
// reads with a select and then a read system call per read, on a thread
// that blocks in the kernel; a woken reader then waits for the Go scheduler
// to give it a processor back, and hands each chunk to the goroutine
// waiting in Expect only when its thread returns. Through the poller the
// reader parks like a network connection: one read per chunk when data is
// waiting, and the goroutine it wakes runs as soon as the reader parks
// again. Everything else (line settings, modem lines, break, flushing,
// exclusive access) stays the library's.
//
// The duplicate shares the open file description, so the port's
// descriptor becomes non-blocking too; the library's own Read and Write are
// therefore never called.
type pollPort struct {
	serial.Port
	f         *os.File
	rc        syscall.RawConn
	closing   atomic.Bool // set by Close: a reader inside a burst stops
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
	dup, err := unix.FcntlInt(uintptr(fd), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		return port, fmt.Errorf("duplicate the descriptor of %s: %w", path, err)
	}
	if err := unix.SetNonblock(dup, true); err != nil {
		unix.Close(dup)
		return port, fmt.Errorf("make %s non-blocking: %w", path, err)
	}
	// os.NewFile registers a non-blocking descriptor with the poller.
	f := os.NewFile(uintptr(dup), path)
	rc, err := f.SyscallConn()
	if err == nil && !inPoller(f) {
		err = errors.New("cannot be waited on by the poller")
	}
	if err != nil {
		f.Close()
		unix.SetNonblock(fd, false)
		return port, fmt.Errorf("%s: %w", path, err)
	}
	return &pollPort{Port: port, f: f, rc: rc}, nil
}

// inPoller reports whether f's descriptor is registered with the poller: a
// deadline can only be set on such a file.
func inPoller(f *os.File) bool {
	return !errors.Is(f.SetReadDeadline(noDeadline), os.ErrNoDeadline)
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

// readChunks reads until a read fails, without leaving the poller between
// bursts: each burst (what the driver has, up to len(buf)) goes
// to each, and the reader then waits for more at once, instead of first
// asking the driver again whether it has any. It is how the console reads
// (see chunkReader).
func (p *pollPort) readChunks(buf []byte, each func(c []byte)) error {
	return p.readBursts(buf, each, false)
}

// readBursts is readChunks; with once it returns after the first burst.
// b must not be empty.
func (p *pollPort) readBursts(b []byte, each func(c []byte), once bool) error {
	n := 0
	var rerr error
	// pass gives each the burst read so far, and reports whether to stop.
	pass := func() bool {
		if n == 0 {
			return false
		}
		each(b[:n])
		n = 0
		return once
	}
	err := p.rc.Read(func(fd uintptr) bool {
		for {
			if p.closing.Load() {
				// Close waits for the read to end: a device that never
				// lets the driver run dry must not keep it waiting.
				pass()
				rerr = os.ErrClosed
				return true
			}
			if n == len(b) {
				if pass() {
					return true
				}
				continue
			}
			m, err := unix.Read(int(fd), b[n:])
			switch {
			case err == unix.EINTR:
				continue
			case err == unix.EAGAIN:
				// Nothing more now: pass the burst on, then wait in
				// the poller (false).
				return pass()
			case err != nil:
				pass()
				rerr = os.NewSyscallError("read", err)
				return true
			case m == 0:
				// A tty whose device went away reads as end of file.
				pass()
				rerr = io.EOF
				return true
			}
			n += m
		}
	})
	if err != nil {
		return err
	}
	return rerr
}

// Write writes all of b, waiting in the poller while the driver's output
// queue is full (flow control holding the line); ResetOutputBuffer or
// Close ends the wait.
func (p *pollPort) Write(b []byte) (int, error) {
	n, err := p.f.Write(b)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the console's error names the port already
		}
	}
	return n, err
}

// abortWrites ends a Write waiting for room in the poller, and fails every
// later one, with an error wrapping os.ErrDeadlineExceeded.
func (p *pollPort) abortWrites() {
	p.f.SetWriteDeadline(time.Unix(1, 0))
}

// SetReadTimeout is accepted and ignored: a pollPort's Read returns when
// data arrives or the port closes, which is what the console's reader
// needs.
func (p *pollPort) SetReadTimeout(timeout time.Duration) error { return nil }

// Close closes the duplicate, which ends a Read or Write waiting in the
// poller, then the library's port.
func (p *pollPort) Close() error {
	p.closeOnce.Do(func() {
		p.closing.Store(true)
		p.closeErr = errors.Join(p.f.Close(), p.Port.Close())
	})
	return p.closeErr
}

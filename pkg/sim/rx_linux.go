package sim

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// rxPriority is the SCHED_FIFO priority of the reader of Options.RealtimeRx:
// above the timed waits of hilrun run --realtime (10), so that the board
// reads what they send as soon as it is sent.
const rxPriority = 20

// readRealtime is readLoop for Options.RealtimeRx: it reads the master on
// a thread of its own, raised to SCHED_FIFO, waiting in poll(2) on the fd
// rather than in Go's poller, and stamps each read as it returns. It
// returns false, having read nothing, when the thread cannot be raised.
func (s *session) readRealtime() bool {
	runtime.LockOSThread()
	attr := unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: rxPriority}
	if unix.SchedSetAttr(0, &attr, 0) != nil {
		runtime.UnlockOSThread()
		return false
	}
	// The thread stays locked: it ends with the goroutine instead of
	// going back to the runtime at real-time priority.
	rc, err := s.master.SyscallConn()
	if err != nil {
		return true
	}
	buf := make([]byte, 4096)
	for {
		var n int
		var at time.Time
		var rerr error
		cerr := rc.Control(func(fd uintptr) {
			pfd := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			for s.ctx.Err() == nil {
				// A bounded poll, so that stop, which cancels ctx before
				// it closes the master, is seen.
				if k, err := unix.Poll(pfd, 50); k <= 0 {
					if err != nil && err != unix.EINTR {
						rerr = err
						return
					}
					continue
				}
				n, rerr = unix.Read(int(fd), buf)
				at = time.Now()
				if rerr == unix.EAGAIN || rerr == unix.EINTR {
					continue
				}
				return
			}
		})
		if n > 0 {
			s.input(at, buf[:n])
		}
		if cerr != nil || rerr != nil || n <= 0 || s.ctx.Err() != nil {
			return true
		}
	}
}

package bench

import (
	"os"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// maxRSS returns the peak resident set size of an exited process in KiB,
// or 0 when the system does not say.
func maxRSS(ps *os.ProcessState) int64 {
	if ru, ok := ps.SysUsage().(*syscall.Rusage); ok {
		return ru.Maxrss // Linux reports kilobytes
	}
	return 0
}

// yieldThread gives the CPU to any other runnable thread of the system,
// not only to other goroutines as runtime.Gosched does.
func yieldThread() {
	unix.Syscall(unix.SYS_SCHED_YIELD, 0, 0, 0)
}

// sleepPrecise waits until deadline: it sleeps in nanosleep, on a thread
// whose timer slack is 1 ns, until window before it, then polls the clock
// with sched_yield between polls, so the CPU stays free for other processes
// for all but the last stretch.
func sleepPrecise(deadline time.Time, window time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	if d := time.Until(deadline) - window; d > 0 {
		ts := unix.NsecToTimespec(d.Nanoseconds())
		for unix.Nanosleep(&ts, &ts) == unix.EINTR {
		}
	}
	for time.Now().Before(deadline) {
		yieldThread()
	}
}

// sleepAbs waits until deadline as the runner now does: one absolute
// clock_nanosleep on CLOCK_MONOTONIC, on a thread whose timer slack is
// 1 ns, with no polling; with fifo the thread sleeps and wakes as
// SCHED_FIFO (hilrun run --realtime), when the process may.
//
// With early > 0 it sleeps until early before the deadline and polls the
// clock, without yielding, for the rest.
func sleepAbs(deadline time.Time, fifo bool, early time.Duration) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	if fifo {
		if old, err := unix.SchedGetAttr(0, 0); err == nil {
			if unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 10}, 0) == nil {
				defer unix.SchedSetAttr(0, old, 0)
			}
		}
	}
	var now unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &now)
	ts := unix.NsecToTimespec(unix.TimespecToNsec(now) + time.Until(deadline).Nanoseconds() - early.Nanoseconds())
	for unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil) == unix.EINTR {
	}
	for time.Now().Before(deadline) {
	}
}

// fifoPermitted says whether this process may make a thread SCHED_FIFO.
func fifoPermitted() bool {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	old, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return false
	}
	if unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: 1}, 0) != nil {
		return false
	}
	unix.SchedSetAttr(0, old, 0)
	return true
}

// selectReader returns a read function for f that waits in select(2) on
// f and a pipe that is never written, then reads: what go.bug.st/serial's
// Read does for every chunk.
func selectReader(f *os.File) (func([]byte) (int, error), error) {
	var pipe [2]int
	if err := unix.Pipe2(pipe[:], unix.O_CLOEXEC); err != nil {
		return nil, err
	}
	fd := int(f.Fd()) // blocking from here on
	return func(p []byte) (int, error) {
		for {
			var set unix.FdSet
			set.Set(fd)
			set.Set(pipe[0])
			tv := unix.NsecToTimeval(time.Second.Nanoseconds())
			n, err := unix.Select(max(fd, pipe[0])+1, &set, nil, nil, &tv)
			if err == unix.EINTR || n == 0 {
				continue
			}
			if err != nil {
				return 0, err
			}
			k, err := unix.Read(fd, p)
			if err == unix.EINTR {
				continue
			}
			return max(k, 0), err
		}
	}, nil
}

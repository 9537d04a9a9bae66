package runner

import (
	"errors"
	"fmt"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

// realtime is set by EnableRealtime: waits run as SCHED_FIFO.
var realtime atomic.Bool

// realtimePriority is the SCHED_FIFO priority of a timed wait: low among
// real-time priorities, above every normal task.
const realtimePriority = 10

// EnableRealtime asks the kernel, for the rest of the process, to lock its
// memory (mlockall, so no page fault stalls a timed step) and to run timed
// waits (delay, repeat every:) as SCHED_FIFO, so that a wait that ends is
// not queued behind the machine's other work. Both need privileges
// (CAP_SYS_NICE and CAP_IPC_LOCK, or root, or a raised RLIMIT_RTPRIO and
// RLIMIT_MEMLOCK). It turns on what the process may have and returns an
// error saying plainly what was refused; what it returns nil for is on.
func EnableRealtime() error {
	var errs []error
	// Test the policy on this thread and restore it; the waits take it
	// on their own threads.
	var old *unix.SchedAttr
	old, err := unix.SchedGetAttr(0, 0)
	if err == nil {
		err = unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: realtimePriority}, 0)
	}
	if err != nil {
		errs = append(errs, fmt.Errorf("real-time scheduling (SCHED_FIFO) was refused (%w): timed steps run at normal priority; it needs CAP_SYS_NICE or RLIMIT_RTPRIO >= %d", err, realtimePriority))
	} else {
		unix.SchedSetAttr(0, old, 0)
		realtime.Store(true)
	}
	if err := unix.Mlockall(unix.MCL_CURRENT | unix.MCL_FUTURE | unix.MCL_ONFAULT); err != nil {
		errs = append(errs, fmt.Errorf("locking memory (mlockall) was refused (%w): a page fault can still stall a timed step; it needs CAP_IPC_LOCK or a larger RLIMIT_MEMLOCK", err))
	}
	return errors.Join(errs...)
}

// fifo makes the calling thread, which the caller has locked, SCHED_FIFO
// and returns the function that restores its policy. A thread that cannot
// change policy stays as it is.
func fifo() (restore func()) {
	old, err := unix.SchedGetAttr(0, 0)
	if err != nil {
		return func() {}
	}
	if unix.SchedSetAttr(0, &unix.SchedAttr{Size: unix.SizeofSchedAttr, Policy: unix.SCHED_FIFO, Priority: realtimePriority}, 0) != nil {
		return func() {}
	}
	return func() { unix.SchedSetAttr(0, old, 0) }
}

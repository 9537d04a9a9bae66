package stream

import "syscall"

// yieldThread lets the kernel run another thread on this CPU first: the
// board's process, or this process's reader, on a machine with few CPUs.
func yieldThread() {
	syscall.RawSyscall(syscall.SYS_SCHED_YIELD, 0, 0, 0)
}

package stream

import (
	"runtime"
	"sync/atomic"
	"time"
)

// A board that answers within a few hundred microseconds (the virtual
// board, QEMU, many USB consoles) makes a round trip that costs about as
// much as the Go scheduler's hand-off from the console's reader to the
// goroutine waiting in Expect: parked on a channel, that goroutine is
// readied by the reader, and the runtime then wakes a second thread
// (futex) that usually finds nothing to do. So an Expect whose Buffer was
// last answered quickly first watches its channel for a short while
// without parking, as a thread that waits for a mutex spins before it
// sleeps, and the reader's close costs no wake-up at all. The spin is
// bounded in time and in the number of goroutines spinning at once, gives
// way to every other runnable goroutine and thread as it goes, and stops
// as soon as the Buffer's answers come slower than the bound (a command
// answered over a 115200-baud line stops it).
const spinFor = 400 * time.Microsecond

// spinRounds bounds the spin by its rounds too (each ends in a system
// call), for when time does not move while a goroutine runs, as in a
// testing/synctest bubble.
const spinRounds = 4000

// spinners counts the goroutines spinning in spinWait, in every Buffer.
var spinners atomic.Int32

// spinWait watches ch, for at most spinFor or until done closes, and
// reports whether ch closed. It spins only when the previous wait on b
// ended within spinFor and fewer goroutines spin than the process has
// processors less one, so that one is always left to run the reader that
// closes ch. The bound is the process's: several hilrun processes on one
// machine each have their own.
func (b *Buffer) spinWait(ch, done <-chan struct{}) bool {
	return b.spinWaitCounted(ch, done, &spinners, runtime.GOMAXPROCS(0))
}

// spinWaitCounted is spinWait with the count of spinning goroutines in
// count and procs processors.
func (b *Buffer) spinWaitCounted(ch, done <-chan struct{}, count *atomic.Int32, procs int) bool {
	if time.Duration(b.lastWait.Load()) > spinFor {
		return false
	}
	if n := count.Add(1); int(n) >= procs {
		count.Add(-1)
		return false
	}
	defer count.Add(-1)
	start := time.Now()
	for range spinRounds {
		for range 64 {
			// One case, so that the check is a load, not a select that
			// locks every channel it names.
			select {
			case <-ch:
				return true
			default:
			}
		}
		select {
		case <-done:
			return false
		default:
		}
		if time.Since(start) > spinFor {
			return false
		}
		runtime.Gosched()
		yieldThread()
	}
	return false
}

// waited records how long a wait on b lasted, for the next spinWait.
func (b *Buffer) waited(d time.Duration) {
	b.lastWait.Store(int64(d))
}

//go:build !linux

package bench

import (
	"errors"
	"os"
	"runtime"
	"time"
)

// maxRSS returns 0: only Linux reports peak memory in a known unit.
func maxRSS(*os.ProcessState) int64 { return 0 }

// yieldThread yields to other goroutines; elsewhere than Linux the
// diagnostic waits of scenario (c) have no system-wide yield.
func yieldThread() { runtime.Gosched() }

// sleepPrecise sleeps until deadline with time.Sleep.
func sleepPrecise(deadline time.Time, _ time.Duration) { time.Sleep(time.Until(deadline)) }

// sleepAbs sleeps until deadline with time.Sleep.
func sleepAbs(deadline time.Time, _ bool, _ time.Duration) { time.Sleep(time.Until(deadline)) }

// fifoPermitted returns false: real-time scheduling is used on Linux only.
func fifoPermitted() bool { return false }

// selectReader is not measured elsewhere than Linux.
func selectReader(*os.File) (func([]byte) (int, error), error) {
	return nil, errors.New("the select diagnostic runs on Linux only")
}

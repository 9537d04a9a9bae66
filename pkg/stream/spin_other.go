//go:build !linux

package stream

// yieldThread does nothing here: runtime.Gosched in spinWait gives way to
// the process's own goroutines.
func yieldThread() {}

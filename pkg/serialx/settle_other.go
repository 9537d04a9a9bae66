//go:build !linux

package serialx

import "go.bug.st/serial"

// outputQueued is false: flow control, the only thing that holds output
// back, is supported on Linux alone.
func outputQueued(serial.Port) (int, bool) { return 0, false }

//go:build !linux

package runner

import "errors"

// EnableRealtime is available on Linux only; elsewhere it says so.
func EnableRealtime() error {
	return errors.New("real-time scheduling and locked memory (--realtime) are available on Linux only: timed steps run at normal priority")
}

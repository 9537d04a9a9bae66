//go:build !linux

package sim

import (
	"errors"
	"os"
	"runtime"
)

// openPTY is only implemented for Linux.
func openPTY() (master, slave *os.File, path string, err error) {
	return nil, nil, "", errors.New("open pty: not supported on " + runtime.GOOS)
}

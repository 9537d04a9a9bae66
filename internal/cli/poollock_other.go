//go:build !unix

package cli

import "errors"

var errBenchBusy = errors.New("bench busy")

func poolLockDir() (string, error) {
	return "", errors.New("bench pools need file locks, which this system lacks")
}

func tryLockBench(string, []string) (*benchLock, error) {
	return nil, errors.New("bench pools need file locks, which this system lacks")
}

type benchLock struct{}

func (l *benchLock) unlock() {}

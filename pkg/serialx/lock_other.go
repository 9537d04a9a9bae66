//go:build !unix

package serialx

// portLock is a UUCP lock file; there are none outside Unix.
type portLock struct{}

// acquireLock takes no lock: UUCP lock files are a Unix convention.
func acquireLock(dir, device string) (lock *portLock, busy *OpenError, unavailable error) {
	return nil, nil, nil
}

func (l *portLock) release() {}

//go:build !unix

package serialx

import "github.com/hilrun/hilrun/pkg/gate/devices"

// portLock is a UUCP lock file; there are none outside Unix.
type portLock struct{}

// acquireLock takes no lock: UUCP lock files are a Unix convention.
func acquireLock(gate devices.Policy, dir, device string) (lock *portLock, busy *OpenError, unavailable error) {
	return nil, nil, nil
}

func (l *portLock) release() {}

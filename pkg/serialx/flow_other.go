//go:build !linux

package serialx

import (
	"fmt"
	"runtime"

	"go.bug.st/serial"
)

// setFlowControl reports that hilrun sets flow control only on Linux:
// go.bug.st/serial has no setting for it.
func setFlowControl(port serial.Port, flow string) error {
	return fmt.Errorf("flow control %s is not supported on %s", flow, runtime.GOOS)
}

//go:build !linux

package serialx

import "go.bug.st/serial"

// pollable returns port as it is: outside Linux the console reads through
// go.bug.st/serial itself.
func pollable(port serial.Port, path string) (serial.Port, error) {
	return port, nil
}

//go:build !linux

package bench

import (
	"context"
	"errors"
	"time"
)

// everyGo is Linux-only: it makes the C client's Linux system calls.
func everyGo(context.Context, string, time.Duration, int, string) (childOutput, error) {
	return childOutput{}, errors.New("the Go loop of (l) runs on Linux only")
}

//go:build !linux

package runner

import (
	"context"
	"runtime"
	"time"
)

// preciseWait polls the clock until deadline, letting other goroutines run
// between polls.
func preciseWait(ctx context.Context, deadline time.Time, window time.Duration) {
	if d := time.Until(deadline) - window; d > 0 {
		time.Sleep(d)
	}
	for n := 0; time.Now().Before(deadline); n++ {
		if n&63 == 0 && ctx.Err() != nil {
			return
		}
		runtime.Gosched()
	}
}

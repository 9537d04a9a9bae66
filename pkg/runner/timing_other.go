//go:build !linux

package runner

import (
	"context"
	"time"
)

// waitUntil waits on a timer until deadline or until ctx is done. It has
// nothing to release.
func waitUntil(ctx context.Context, deadline time.Time, _ bool) (release func()) {
	t := time.NewTimer(time.Until(deadline))
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
	return nil
}

package runner

import (
	"context"
	"time"

	"github.com/hilrun/hilrun/pkg/stream"
)

// idleMargin is the shortest wait on a clock that gives the sink its
// Idle: a shorter one would end late for the sink's writes.
const idleMargin = time.Millisecond

// withIdle is ctx under which the waits of the steps (an expect's or a
// capture's for bytes, a delay, a poll, a barrier) call the sink's Idle
// right before they block, when the sink is an Idler.
func (r *run) withIdle(ctx context.Context) context.Context {
	if r.idler == nil {
		return ctx
	}
	return stream.WithIdle(ctx, r.idler.Idle)
}

// idleUntil gives the sink its Idle before a wait until deadline, when
// the wait is long enough for it.
func idleUntil(ctx context.Context, deadline time.Time) {
	if time.Until(deadline) > idleMargin {
		stream.Idle(ctx)
	}
}

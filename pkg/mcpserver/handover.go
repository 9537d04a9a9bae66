package mcpserver

import (
	"context"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/serialx"
)

// releaser is a console that can hand its port over to an uploader:
// *serialx.Console.
type releaser interface {
	Release(ctx context.Context) error
	Reacquire(ctx context.Context, opts serialx.ReacquireOptions) error
}

// handing is a console the runner may release for an upload's port and
// take back after.
type handing struct {
	runner.Console
	r releaser
}

// Unwrap is the console behind h, for the runner's modem line steps.
func (h *handing) Unwrap() runner.Console { return h.Console }

func (h *handing) Release(ctx context.Context) error { return h.r.Release(ctx) }

func (h *handing) Reacquire(ctx context.Context) error {
	return h.r.Reacquire(ctx, serialx.ReacquireOptions{})
}

// openedHanding is a handing console opened for one run: the run sees all
// it received (runner.OpenedConsole).
type openedHanding struct{ *handing }

func (openedHanding) OpenedAt() int64 { return 0 }

// openedForRun is handOver(c, c) for a console a sequence opened for
// itself, which the run sees from its first byte.
func openedForRun(c Console) runner.Console {
	h := handOver(c, c)
	if hh, ok := h.(*handing); ok {
		return openedHanding{hh}
	}
	return h
}

// handOver returns c as a console the runner can release when under, the
// console behind it, supports that; else c.
func handOver(c runner.Console, under any) runner.Console {
	if r, ok := under.(releaser); ok {
		return &handing{Console: c, r: r}
	}
	return c
}

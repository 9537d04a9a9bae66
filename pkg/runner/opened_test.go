package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// bufConsole is a Console over a stream.Buffer that already holds what
// the device sent while its port was being opened.
type bufConsole struct{ b *stream.Buffer }

func (c bufConsole) Write(ctx context.Context, p []byte) (int64, error) { return c.b.End(), nil }
func (c bufConsole) Expect(ctx context.Context, from int64, want, failOn []stream.Pattern) (stream.Match, error) {
	return c.b.Expect(ctx, from, want, failOn)
}
func (c bufConsole) Capture(ctx context.Context, from int64, opt stream.CaptureOptions) (stream.Capture, error) {
	return c.b.Capture(ctx, from, opt)
}
func (c bufConsole) Cursor() int64                   { return c.b.End() }
func (c bufConsole) Tail(lines, maxBytes int) []byte { return c.b.Tail(lines, maxBytes) }
func (c bufConsole) Watch(p []stream.Pattern, fn func(stream.Hit)) func() {
	return c.b.Watch(p, fn)
}
func (c bufConsole) OnReceive(func(time.Time, int64, []byte)) func() { return func() {} }
func (c bufConsole) Close() error                                    { return nil }

// openedConsole is a bufConsole opened for the run: it began at offset 0.
type openedConsole struct{ bufConsole }

func (openedConsole) OpenedAt() int64 { return 0 }

// A console opened for the run shows its first expect what arrived while
// the port was opening (a banner over RFC 2217); a console the run
// borrows starts where it stands.
func TestFirstExpectSeesWhatArrivedWhileOpening(t *testing.T) {
	seq := load(t, "steps:\n  - expect: \"sim> \"\n    timeout: 50ms\n")
	for _, tc := range []struct {
		name string
		wrap func(bufConsole) runner.Console
		want runner.Status
	}{
		{"opened for the run", func(c bufConsole) runner.Console { return openedConsole{c} }, runner.Passed},
		{"borrowed", func(c bufConsole) runner.Console { return c }, runner.Failed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := stream.NewBuffer(0)
			b.Append(time.Now(), []byte("hilrun virtual board\r\nsim> "))
			c := tc.wrap(bufConsole{b})
			res := runner.Run(context.Background(), seq, runner.Bench{
				Open: func(context.Context, *steps.Device) (runner.Console, error) { return c, nil },
			}, runner.Options{})
			if res.Status != tc.want {
				t.Fatalf("status %s, want %s: %s", res.Status, tc.want, res.Error)
			}
		})
	}
}

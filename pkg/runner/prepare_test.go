package runner_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/steps"
)

// Prepare runs before any console opens and the consoles open the
// sequence it returns; its release runs after the consoles are closed,
// after the finally steps, whatever the outcome.
func TestPrepare(t *testing.T) {
	for _, tc := range []struct {
		name       string
		prepareErr error
		reply      string
		status     runner.Status
	}{
		{"passed", nil, "ok", runner.Passed},
		{"failed", nil, "nope", runner.Failed},
		{"prepare fails", errors.New("start qemu: boom"), "ok", runner.Errored},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seq, err := steps.Parse("p.yaml", []byte("steps:\n  - {send: hi, expect: ok, timeout: 1s}\nfinally:\n  - {send: bye}\n"), steps.LoadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			dev := newDevice(func(string) string { return tc.reply + "\n" })
			var order []string
			res := runner.Run(context.Background(), seq, runner.Bench{
				Open: func(ctx context.Context, d *steps.Device) (runner.Console, error) {
					order = append(order, "open "+d.Port)
					return dev, nil
				},
				Prepare: func(ctx context.Context, s *steps.Sequence) (*steps.Sequence, func(), error) {
					order = append(order, "prepare")
					c := *s
					c.Devices = []*steps.Device{{Name: s.Devices[0].Name, Port: "/dev/bound"}}
					return &c, func() {
						dev.mu.Lock()
						closed := dev.closed
						dev.mu.Unlock()
						order = append(order, "release, closed "+map[bool]string{true: "yes", false: "no"}[closed])
					}, tc.prepareErr
				},
			}, runner.Options{})
			if res.Status != tc.status {
				t.Errorf("status %s, want %s (%s)", res.Status, tc.status, res.Error)
			}
			if tc.prepareErr != nil && !strings.Contains(res.Error, "start qemu: boom") {
				t.Errorf("error %q does not say why", res.Error)
			}
			want := "prepare, open /dev/bound, release, closed yes"
			if tc.prepareErr != nil {
				want = "prepare, release, closed no"
			}
			if got := strings.Join(order, ", "); got != want {
				t.Errorf("order: %s, want %s", got, want)
			}
			if seq.Devices[0].Port != "" {
				t.Errorf("the loaded sequence was bound: port %q", seq.Devices[0].Port)
			}
		})
	}
}

package runner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
)

// Read lets the runner show the output around a fail_on match, as
// serialx.Console does.
func (d *device) Read(from int64, max int) ([]byte, int64, int64) { return d.buf.Read(from, max) }

// crash prints a crash dump, then a reboot that prints more lines than a
// report shows.
func crash(line string) string {
	if line != "panic" {
		return "ok\r\n"
	}
	var b strings.Builder
	b.WriteString("panicking\r\nGuru Meditation Error: core 0 panic'ed (HardFault)\r\nPC: 0x08000abc\r\nLR: 0x08000123\r\nRebooting...\r\n")
	for i := range 40 {
		b.WriteString("boot line " + string(rune('a'+i%26)) + "\r\n")
	}
	b.WriteString("sim> ")
	return b.String()
}

// The excerpt of a fail_on failure shows the output around the match (the
// crash), not the tail the board printed after it while rebooting: in a
// step's expect, and when the match ends a step that waits for nothing on
// that console.
func TestFailOnExcerptShowsTheCrash(t *testing.T) {
	for _, tc := range []struct{ name, src string }{
		{"expect", `
fail_on: [HardFault]
steps:
  - send: panic
    expect: all good
    timeout: 30s`},
		{"delay", `
fail_on: [HardFault]
steps:
  - send: panic
  - delay: 30s`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dev := newDevice(crash)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			res := run(t, ctx, load(t, tc.src), dev, nil)
			if res.Status != runner.Failed {
				t.Fatalf("status %s, want failed", res.Status)
			}
			var got string
			for _, s := range res.Steps {
				if s.Status == runner.Failed {
					got = s.Received
				}
			}
			for _, want := range []string{"panicking", "HardFault", "PC: 0x08000abc", "Rebooting"} {
				if !strings.Contains(got, want) {
					t.Errorf("excerpt lacks %q:\n%s", want, got)
				}
			}
			if strings.Contains(got, "sim> ") {
				t.Errorf("excerpt shows the end of the reboot:\n%s", got)
			}
		})
	}
}

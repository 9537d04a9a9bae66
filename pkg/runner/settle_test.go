package runner_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/runner"
)

// adcDevice answers "adc" with "adc=40" and nothing more, and "adc slow"
// with "adc=40", then "95\r\n" after a pause, as a board does whose UART
// output is interrupted mid-number.
func adcDevice() *device {
	var d *device
	d = newDevice(func(line string) string {
		switch line {
		case "adc":
			return "adc=40"
		case "adc slow":
			go func() {
				time.Sleep(300 * time.Millisecond)
				d.print("95\r\nsim> ")
			}()
			return "adc=40"
		}
		return shell(line)
	})
	return d
}

// A regexp match that bytes still arriving could grow is not saved until a
// byte ends it: 4095, not 40.
func TestExpectHoldsGrowingMatch(t *testing.T) {
	seq := load(t, `
steps:
  - send: adc slow
    expect: {regex: 'adc=(?P<adc>\d+)'}
    settle: 1m
    timeout: 30s
  - assert: num(adc) == 4095
`)
	res := run(t, context.Background(), seq, adcDevice(), nil)
	if res.Status != runner.Passed || savedVar(res, "adc") != "4095" {
		t.Fatalf("status %s (%s), adc = %v; want 4095", res.Status, statuses(res), savedVar(res, "adc"))
	}
}

// A line that stays quiet commits the match after the settle time: the
// step's, else the device's, else the default; a step's timeout commits it
// too. Only lower bounds on the wait are checked.
func TestExpectSettleTime(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		minWait time.Duration
	}{
		{"step settle", `
steps:
  - send: adc
    expect: {regex: 'adc=(?P<adc>\d+)'}
    settle: 30ms
`, 30 * time.Millisecond},
		{"device settle", `
devices:
  console: {port: /dev/null, settle: 40ms}
steps:
  - send: adc
    expect: {regex: 'adc=(?P<adc>\d+)'}
`, 40 * time.Millisecond},
		{"the timeout comes first", `
steps:
  - send: adc
    expect: {regex: 'adc=(?P<adc>\d+)'}
    settle: 1m
    timeout: 50ms
`, 50 * time.Millisecond},
		{"settle 0 commits at once", `
devices:
  console: {port: /dev/null, settle: 1m}
steps:
  - send: adc
    expect: {regex: 'adc=(?P<adc>\d+)'}
    settle: 0s
    timeout: 30s
`, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := run(t, context.Background(), load(t, tt.src), adcDevice(), nil)
			if res.Status != runner.Passed || savedVar(res, "adc") != "40" {
				t.Fatalf("status %s (%s), adc = %v; want 40", res.Status, statuses(res), savedVar(res, "adc"))
			}
			if d := res.Steps[0].Duration; d < tt.minWait {
				t.Errorf("the expect took %s, less than its settle time %s", d, tt.minWait)
			}
		})
	}
}

// An exec output whose middle was dropped: a match at the end of the kept
// head that the dropped bytes could have continued gives no value.
func TestExecMatchCutAtTheHead(t *testing.T) {
	dir := t.TempDir()
	// 65526 x's, then "size=0x08000000": the head (64 KiB) ends at
	// "size=0x080".
	seq := load(t, `steps:
  - exec: [sh, -c, 'head -c 65526 /dev/zero | tr "\0" x; echo size=0x08000000; head -c 3000000 /dev/zero | tr "\0" y']
    expect: 'size=(0x[0-9a-f]+)'
    regex: true
    save: size
`)
	res := runner.Run(context.Background(), seq, runner.Bench{
		Host:    process.Runner{Policy: process.Permit(environ.Host())},
		OpenLog: openLog,
	}, runner.Options{
		KeepSteps:   true,
		ArtifactDir: dir,
	})
	if got := statuses(res); got != "0:failed" || savedVar(res, "size") != nil {
		t.Fatalf("statuses %s, size %v: %+v", got, savedVar(res, "size"), res.Steps)
	}
	if m := res.Steps[0].Message; !strings.Contains(m, "may go on into the") {
		t.Errorf("message %s", m)
	}
}

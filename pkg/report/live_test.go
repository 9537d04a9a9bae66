package report

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
)

// timers stands in for time.AfterFunc: it records what was armed, and the
// test fires the timers itself.
type timers struct {
	mu      sync.Mutex
	delays  []time.Duration
	fns     []func()
	stopped []bool
}

func (tm *timers) after(d time.Duration, f func()) func() bool {
	tm.mu.Lock()
	defer tm.mu.Unlock()
	i := len(tm.fns)
	tm.delays = append(tm.delays, d)
	tm.fns = append(tm.fns, f)
	tm.stopped = append(tm.stopped, false)
	return func() bool {
		tm.mu.Lock()
		defer tm.mu.Unlock()
		tm.stopped[i] = true
		return true
	}
}

// fire runs the timer armed i-th, as time.AfterFunc would once it expired.
func (tm *timers) fire(i int) {
	tm.mu.Lock()
	f := tm.fns[i]
	tm.mu.Unlock()
	f()
}

func TestConsoleStillWaiting(t *testing.T) {
	tests := []struct {
		name        string
		after, each time.Duration
		want        []time.Duration
	}{
		{name: "defaults", want: []time.Duration{10 * time.Second, 30 * time.Second, 30 * time.Second}},
		{name: "settings", after: time.Second, each: 2 * time.Second, want: []time.Duration{time.Second, 2 * time.Second, 2 * time.Second}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			tm := &timers{}
			now := base
			c := NewConsole(&out, ConsoleOptions{WaitingAfter: tt.after, WaitingEvery: tt.each, AfterFunc: tm.after,
				Now: func() time.Time { return now }})
			step := &runner.StepResult{Path: "1.2", Kind: "send", Name: "crash the firmware", Group: "boot", Timeout: time.Minute}
			c.Event(runner.Event{Type: runner.SequenceStarted, Sequence: "s", File: "s.yaml", Time: base})
			c.Event(runner.Event{Type: runner.StepStarted, Step: step, Time: base})
			c.Event(runner.Event{Type: runner.ConsoleOutput, Console: "console", Data: []byte("boot: ok\r\nsim> \x1b[0m")})
			if len(tm.delays) != 1 || out.String() != "▶ s (s.yaml)\n" {
				t.Fatalf("armed %v, printed %q before the step waited", tm.delays, out.String())
			}
			now = base.Add(10 * time.Second)
			tm.fire(0)
			now = base.Add(40 * time.Second)
			tm.fire(1)
			want := "▶ s (s.yaml)\n" +
				"      … step 1.2 send crash the firmware: still running after 10s of 60s; last received from console: \"sim> \\x1b[0m\"\n" +
				"      … step 1.2 send crash the firmware: still running after 40s of 60s; last received from console: \"sim> \\x1b[0m\"\n"
			if out.String() != want {
				t.Errorf("output\n%s\nwant\n%s", out.String(), want)
			}
			done := *step
			done.Status = runner.Passed
			c.Event(runner.Event{Type: runner.StepFinished, Step: &done})
			if !tm.stopped[2] {
				t.Error("the timer of a finished step was not stopped")
			}
			n := out.Len()
			tm.fire(2) // a timer that fires late prints nothing
			if out.Len() != n {
				t.Errorf("a finished step still printed: %q", out.String()[n:])
			}
			if got := tm.delays; !slices.Equal(got, tt.want) {
				t.Errorf("timers armed for %v, want %v", got, tt.want)
			}
		})
	}
}

func TestConsoleLiveLineCounts(t *testing.T) {
	var out bytes.Buffer
	tm := &timers{}
	now := base
	c := NewConsole(&out, ConsoleOptions{Color: true, AfterFunc: tm.after, Now: func() time.Time { return now }})
	c.Event(runner.Event{Type: runner.StepStarted, Time: base,
		Step: &runner.StepResult{Path: "2", Kind: "expect", Name: "all good", Timeout: 30 * time.Second}})
	if tm.delays[0] != time.Second {
		t.Errorf("a terminal's running line is redrawn after %s, want every second", tm.delays[0])
	}
	now = base.Add(3 * time.Second)
	tm.fire(0)
	got := out.String()
	if !strings.HasSuffix(got, ansiClearLine+ansiDim+"running: step 2 expect all good  3s / 30s"+ansiReset) {
		t.Errorf("running line after 3 s: %q", got)
	}
	if strings.Contains(got, "\n") {
		t.Errorf("the running line left a line behind: %q", got)
	}
}

func TestConsoleStreamsBuildOutputWithoutVerbose(t *testing.T) {
	tests := []struct {
		name  string
		opts  ConsoleOptions
		kind  string
		shown bool
	}{
		{name: "build in CI", kind: "build", shown: true},
		{name: "upload in CI", kind: "upload", shown: true},
		{name: "a device's output in CI", kind: "send"},
		{name: "build on a terminal", opts: ConsoleOptions{Color: true}, kind: "build"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			tt.opts.AfterFunc = (&timers{}).after
			c := NewConsole(&out, tt.opts)
			c.Event(runner.Event{Type: runner.StepStarted, Step: &runner.StepResult{Path: "0", Kind: tt.kind}})
			c.Event(runner.Event{Type: runner.ConsoleOutput, Console: tt.kind, Data: []byte("Compiling main.c\n")})
			if got := strings.Contains(out.String(), "Compiling main.c"); got != tt.shown {
				t.Errorf("output shown = %v, want %v: %q", got, tt.shown, out.String())
			}
		})
	}
}

func TestConsoleAnnouncesReconnection(t *testing.T) {
	var out bytes.Buffer
	c := NewConsole(&out, ConsoleOptions{AfterFunc: (&timers{}).after})
	c.Event(runner.Event{Type: runner.StepStarted, Step: &runner.StepResult{Path: "1", Kind: "expect"}})
	c.Event(runner.Event{Type: runner.ConsoleNotice, Console: "esp32", Data: []byte("reconnected on /dev/ttyUSB1")})
	if want := "      console esp32 reconnected on /dev/ttyUSB1\n"; out.String() != want {
		t.Errorf("output %q, want %q", out.String(), want)
	}
}

func TestConsoleSetupFailureHint(t *testing.T) {
	tests := []struct {
		name, from string
		hint       bool
	}{
		{name: "flag", from: "--port dut=/dev/ttyUSB7", hint: true},
		{name: "sequence", from: "", hint: true},
		{name: "virtual board", from: "--sim"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			c := NewConsole(&out, ConsoleOptions{})
			c.Event(runner.Event{Type: runner.SetupFailed, Console: "dut", Data: []byte(tt.from),
				Result: &runner.SequenceResult{Status: runner.Errored, Error: "device dut: open /dev/ttyUSB7: no such port"}})
			got := out.String()
			if !strings.HasPrefix(got, "  ! device dut: open /dev/ttyUSB7: no such port\n") {
				t.Errorf("the cause is not first: %q", got)
			}
			if strings.Contains(got, "hilrun ports") != tt.hint {
				t.Errorf("hint shown = %v, want %v: %q", !tt.hint, tt.hint, got)
			}
		})
	}
}

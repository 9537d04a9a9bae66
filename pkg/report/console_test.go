package report

import (
	"bytes"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/runner"
)

// events replays seq as the runner would emit it: a container starts before
// the steps it contains and finishes after them, what is sent to a console is
// echoed as ConsoleInput, and the transcripts arrive in small chunks that split
// lines, during the first step.
func events(seq runner.SequenceResult) []runner.Event {
	at := func(d time.Duration) time.Time { return seq.StartedAt.Add(d) }
	evs := []runner.Event{{Type: runner.SequenceStarted, Time: at(0), Sequence: seq.Name, File: seq.File}}
	started := make(map[int]bool)
	for i := range seq.Steps {
		s := &seq.Steps[i]
		// The containers around s start before it, outermost first.
		var outer []int
		for j := range seq.Steps {
			if c := &seq.Steps[j]; isContainer(c) && !started[j] && containsPath(c.Path, s.Path) {
				outer = append(outer, j)
			}
		}
		slices.SortStableFunc(outer, func(a, b int) int { return len(seq.Steps[a].Path) - len(seq.Steps[b].Path) })
		for _, j := range outer {
			c := &seq.Steps[j]
			started[j] = true
			evs = append(evs, runner.Event{Type: runner.StepStarted, Time: at(c.Started), Offset: c.Started,
				Sequence: seq.Name, File: seq.File, Step: &runner.StepResult{Index: c.Index, Path: c.Path, Kind: c.Kind, Name: c.Name, Group: c.Group, Branch: c.Branch}})
		}
		if !started[i] {
			evs = append(evs, runner.Event{Type: runner.StepStarted, Time: at(s.Started), Offset: s.Started,
				Sequence: seq.Name, File: seq.File, Step: &runner.StepResult{Index: s.Index, Path: s.Path, Kind: s.Kind, Name: s.Name, Group: s.Group, Branch: s.Branch}})
		}
		if s.Kind == "send" && s.Status != runner.Skipped {
			evs = append(evs, runner.Event{Type: runner.ConsoleInput, Time: at(s.Started), Offset: s.Started,
				Sequence: seq.Name, File: seq.File, Console: "dut", Data: []byte(s.Name + "\r\n")})
		}
		if i == 0 {
			for _, t := range seq.Transcripts {
				for data := t.Data; len(data) > 0; {
					n := min(len(data), 9)
					evs = append(evs, runner.Event{Type: runner.ConsoleOutput, Time: at(s.Started), Offset: s.Started,
						Sequence: seq.Name, File: seq.File, Console: t.Console, Data: data[:n]})
					data = data[n:]
				}
			}
		}
		evs = append(evs, runner.Event{Type: runner.StepFinished, Time: at(s.Started + s.Duration), Offset: s.Started + s.Duration,
			Sequence: seq.Name, File: seq.File, Step: s})
	}
	return append(evs, runner.Event{Type: runner.SequenceFinished, Time: at(seq.Duration), Offset: seq.Duration,
		Sequence: seq.Name, File: seq.File, Result: &seq})
}

// fakeClock returns a clock that advances by step on every call.
func fakeClock(start time.Time, step time.Duration) func() time.Time {
	now := start
	return func() time.Time {
		t := now
		now = now.Add(step)
		return t
	}
}

func TestConsoleGolden(t *testing.T) {
	tests := []struct {
		name string
		opts ConsoleOptions
	}{
		{"plain", ConsoleOptions{}},
		{"color", ConsoleOptions{Color: true}},
		{"verbose_plain", ConsoleOptions{Verbose: true}},
		{"verbose_color", ConsoleOptions{Color: true, Verbose: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var out bytes.Buffer
			tt.opts.Now = fakeClock(base, 4*time.Second)
			c := NewConsole(&out, tt.opts)
			results := fixture()
			for _, seq := range results {
				for _, e := range events(seq) {
					c.Event(e)
				}
			}
			c.Summary(results)
			if err := c.Err(); err != nil {
				t.Fatal(err)
			}
			if !tt.opts.Color && bytes.ContainsAny(out.Bytes(), "\x1b\r") {
				t.Errorf("plain output holds an escape or carriage return:\n%q", out.String())
			}
			golden(t, "console_"+tt.name+".golden", out.Bytes())
		})
	}
}

// TestConsoleTransientLine checks that the "running" line is erased before
// anything else is printed and never left on screen.
func TestConsoleTransientLine(t *testing.T) {
	var out bytes.Buffer
	c := NewConsole(&out, ConsoleOptions{Color: true, Verbose: true})
	seq := fixture()[1]
	for _, e := range events(seq) {
		c.Event(e)
	}
	text := out.String()
	if !strings.Contains(text, "running: step 1 expect erase done  0s") {
		t.Errorf("no running line for step 1 in:\n%q", text)
	}
	// Every line drawn after a running line starts with the erase sequence.
	for _, chunk := range strings.Split(text, "\n") {
		if i := strings.Index(chunk, "running: "); i >= 0 {
			rest := chunk[i:]
			if !strings.Contains(rest, ansiClearLine) {
				t.Errorf("running line not erased before the next line: %q", chunk)
			}
		}
	}
	if !strings.HasSuffix(text, "\n") {
		t.Errorf("output does not end with a newline: %q", text[max(0, len(text)-40):])
	}
}

func TestConsoleLongRunningLineIsTruncated(t *testing.T) {
	var out bytes.Buffer
	c := NewConsole(&out, ConsoleOptions{Color: true, AfterFunc: (&timers{}).after})
	c.Event(runner.Event{Type: runner.StepStarted, Step: &runner.StepResult{Path: "0", Kind: "send", Name: strings.Repeat("x", 200)}})
	got := strings.TrimSuffix(strings.TrimPrefix(out.String(), ansiDim), ansiReset)
	if n := len([]rune(got)); n != runningWidth {
		t.Errorf("running line has %d runes, want %d: %q", n, runningWidth, got)
	}
}

func TestConsoleSummaryWithoutEvents(t *testing.T) {
	var out bytes.Buffer
	c := NewConsole(&out, ConsoleOptions{})
	c.Summary(fixture()[:1])
	want := "PASSED 1 sequence: 1 passed, 0 failed in 1.235s\n  ✓ boot check (seq/boot.yaml) 1.235s\n"
	if got := out.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

type failingWriter struct{ calls int }

func (w *failingWriter) Write(p []byte) (int, error) {
	w.calls++
	return 0, errors.New("disk full")
}

func TestConsoleWriteError(t *testing.T) {
	w := &failingWriter{}
	c := NewConsole(w, ConsoleOptions{})
	for _, e := range events(fixture()[0]) {
		c.Event(e)
	}
	if err := c.Err(); err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Errorf("Err() = %v, want the write error", err)
	}
	if w.calls != 1 {
		t.Errorf("writer called %d times after failing, want 1", w.calls)
	}
}

func TestLabelledValues(t *testing.T) {
	tests := []struct {
		name string
		data map[string]any
		want string
		ok   bool
	}{
		{"uint64", map[string]any{"label": "mem", "values": []uint64{1, 0xff}}, "0x1 0xff", true},
		{"width", map[string]any{"label": "mem", "values": []uint32{1, 0xff}, "width": 16}, "0x0001 0x00ff", true},
		{"any", map[string]any{"label": "mem", "values": []any{uint8(7), -1, 2.5, float64(255), "x\x1b"}}, `0x7 -1 2.5 0xff x\x1b`, true},
		{"no label", map[string]any{"values": []uint64{1}}, "", false},
		{"no values", map[string]any{"label": "mem"}, "", false},
		{"not a list", map[string]any{"label": "mem", "values": 3}, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, got, ok := labelledValues(tt.data)
			if got != tt.want || ok != tt.ok {
				t.Errorf("labelledValues = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestColorEnabled(t *testing.T) {
	tests := []struct {
		name     string
		terminal bool
		env      map[string]string
		want     bool
	}{
		{"terminal", true, map[string]string{"TERM": "xterm-256color"}, true},
		{"no TERM", true, nil, true},
		{"not a terminal", false, map[string]string{"TERM": "xterm"}, false},
		{"NO_COLOR", true, map[string]string{"TERM": "xterm", "NO_COLOR": "1"}, false},
		{"empty NO_COLOR", true, map[string]string{"TERM": "xterm", "NO_COLOR": ""}, true},
		{"dumb", true, map[string]string{"TERM": "dumb"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := colorEnabled(tt.terminal, func(k string) string { return tt.env[k] })
			if got != tt.want {
				t.Errorf("colorEnabled = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestColorFor(t *testing.T) {
	t.Setenv("NO_COLOR", "")
	t.Setenv("TERM", "xterm")
	if ColorFor(nil, environ.Host()) {
		t.Error("ColorFor(nil) = true")
	}
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if ColorFor(f, environ.Host()) {
		t.Error("ColorFor(regular file) = true")
	}

	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pty: %v", err)
	}
	defer ptmx.Close()
	defer tty.Close()
	if !ColorFor(tty, environ.Host()) {
		t.Error("ColorFor(pty) = false")
	}
	t.Setenv("NO_COLOR", "1")
	if ColorFor(tty, environ.Host()) {
		t.Error("ColorFor(pty) with NO_COLOR = true")
	}
}

// TestConsoleConcurrentSummary runs Summary while events arrive, for the race
// detector.
func TestConsoleConcurrentSummary(t *testing.T) {
	var out bytes.Buffer
	c := NewConsole(&out, ConsoleOptions{Color: true, Verbose: true})
	results := fixture()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < 10; i++ {
			c.Summary(results)
		}
	}()
	for _, e := range events(results[1]) {
		c.Event(e)
	}
	<-done
	if err := c.Err(); err != nil {
		t.Fatal(err)
	}
}

// containsPath reports whether the step at path child lies inside the
// container at path parent: "3" contains "3.1" and "3#2.0" but not "31".
func containsPath(parent, child string) bool {
	rest, ok := strings.CutPrefix(child, parent)
	return ok && rest != "" && (rest[0] == '.' || rest[0] == '#')
}

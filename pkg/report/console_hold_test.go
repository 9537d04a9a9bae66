package report

import (
	"os"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/runner"
	"github.com/hilrun/hilrun/pkg/testenv"
)

// never is a Hold no test outlives: only Idle, Flush and the ends of
// sequences write.
const never = time.Hour

// A held console prints, by the end of each sequence and its summary,
// exactly what one that writes every event prints: the golden output.
func TestConsoleHeldIsTheSame(t *testing.T) {
	for _, tt := range []struct {
		name string
		opts ConsoleOptions
	}{
		{"plain", ConsoleOptions{}},
		{"verbose_plain", ConsoleOptions{Verbose: true}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out testenv.Buffer
			tt.opts.Now = fakeClock(base, 4*time.Second)
			tt.opts.Hold = never
			c := NewConsole(&out, tt.opts)
			results := fixture()
			for _, seq := range results {
				evs := events(seq)
				for i, e := range evs {
					c.Event(e)
					if i%3 == 0 {
						c.Idle()
					}
				}
			}
			c.Summary(results)
			if err := c.Err(); err != nil {
				t.Fatal(err)
			}
			want, err := os.ReadFile("testdata/console_" + tt.name + ".golden")
			if err != nil {
				t.Fatal(err)
			}
			if got := out.String(); got != string(want) {
				t.Errorf("held output differs from the golden file:\n%s", got)
			}
		})
	}
}

// runningLine matches the running line as drawn and its erasure.
var runningLine = regexp.MustCompile(`\x1b\[2mrunning: [^\x1b]*\x1b\[0m|\r\x1b\[K`)

// On a terminal, a held console shows the same lines, draws the running
// line only when it writes, and leaves none on screen at the end.
func TestConsoleHeldColor(t *testing.T) {
	now := func() time.Time { return base }
	var sync, held testenv.Buffer
	a := NewConsole(&sync, ConsoleOptions{Color: true, Now: now})
	b := NewConsole(&held, ConsoleOptions{Color: true, Now: now, Hold: never})
	seq := fixture()[1]
	for _, e := range events(seq) {
		a.Event(e)
		b.Event(e)
		if e.Type == runner.StepStarted {
			b.Flush()
		}
	}
	text := held.String()
	if !strings.Contains(text, "running: step 1 expect erase done  0s") {
		t.Errorf("no running line for step 1 in:\n%q", text)
	}
	if got, want := runningLine.ReplaceAllString(text, ""), runningLine.ReplaceAllString(sync.String(), ""); got != want {
		t.Errorf("held lines differ:\n%q\nwant\n%q", got, want)
	}
	if !strings.HasSuffix(text, "\n") {
		t.Errorf("a running line is left on screen: %q", text[max(0, len(text)-80):])
	}
}

// What a held console printed is written by Idle (at most once per
// idleEvery), by Flush (a signal, a warning) and by its timer, and not
// before: the run's events do not wait for the terminal.
func TestConsoleHeldWrites(t *testing.T) {
	var out testenv.Buffer
	c := NewConsole(&out, ConsoleOptions{Hold: never})
	seq := fixture()[0]
	evs := events(seq)
	c.Event(evs[0])
	if out.String() != "" {
		t.Fatalf("written before Idle: %q", out.String())
	}
	c.Idle()
	if !strings.Contains(out.String(), "▶ ") {
		t.Fatalf("Idle did not write the header: %q", out.String())
	}
	for _, e := range evs[1 : len(evs)-1] {
		c.Event(e)
	}
	before := out.String()
	c.Flush()
	if after := out.String(); len(after) <= len(before) || !strings.Contains(after, "step 0") {
		t.Fatalf("Flush did not write the steps:\n%s", after)
	}
	c.Event(evs[len(evs)-1])
	if !strings.Contains(out.String(), seq.Name+":") {
		t.Fatalf("the sequence's end was not written when its event returned:\n%s", out.String())
	}

	// The timer writes what no Idle did, within Hold.
	var late testenv.Buffer
	d := NewConsole(&late, ConsoleOptions{Hold: time.Millisecond})
	d.Event(evs[0])
	for start := time.Now(); !strings.Contains(late.String(), "▶ "); time.Sleep(time.Millisecond) {
		if time.Since(start) > 20*time.Second {
			t.Fatal("the timer never wrote the header")
		}
	}
}

// An interrupted sequence's every line is written by the time its end
// is: the steps before the interrupt, the interrupted one, its finally
// steps, and the INTERRUPTED line.
func TestConsoleHeldInterrupted(t *testing.T) {
	var out testenv.Buffer
	c := NewConsole(&out, ConsoleOptions{Hold: never})
	seq := runner.SequenceResult{Name: "stopped", File: "stopped.yaml", StartedAt: base, Status: runner.Interrupted, Error: "interrupted", Duration: time.Second, Steps: []runner.StepResult{
		{Index: 0, Path: "0", Kind: "send", Name: "echo one", Status: runner.Passed},
		{Index: 1, Path: "1", Kind: "expect", Name: "never", Status: runner.Interrupted, Message: "interrupted"},
		{Index: 2, Path: "2", Kind: "send", Name: "echo three", Status: runner.Skipped, Message: "not run"},
		{Index: 3, Path: "finally.0", Kind: "exec", Name: "cleanup", Status: runner.Passed},
	}}
	for _, e := range events(seq) {
		c.Event(e)
	}
	text := out.String()
	for _, want := range []string{"step 0 ", "step 1 ", "step 2 ", "step finally.0", "INTERRUPTED stopped: interrupted"} {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in:\n%s", want, text)
		}
	}
}

// Idle and Flush from several lines of execution at once, beside the
// events of parallel branches and the timer, lose and repeat nothing
// (run it with -race).
func TestConsoleHeldConcurrent(t *testing.T) {
	var out testenv.Buffer
	c := NewConsole(&out, ConsoleOptions{Color: true, Hold: time.Millisecond})
	c.Event(runner.Event{Type: runner.SequenceStarted, Sequence: "many", File: "many.yaml", Time: time.Now()})
	var mu sync.Mutex // the runner's: events come one at a time
	var wg sync.WaitGroup
	const per = 200
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			branch := string(rune('a' + g))
			for i := range per {
				st := &runner.StepResult{Index: g*1000 + i, Path: "0." + branch + "." + strconv.Itoa(i), Kind: "set", Branch: branch, Status: runner.Passed}
				mu.Lock()
				c.Event(runner.Event{Type: runner.StepStarted, Time: time.Now(), Step: st})
				mu.Unlock()
				c.Idle()
				mu.Lock()
				c.Event(runner.Event{Type: runner.StepFinished, Step: st})
				mu.Unlock()
				if i%50 == 0 {
					c.Flush()
				}
			}
		}()
	}
	wg.Wait()
	c.Event(runner.Event{Type: runner.SequenceFinished, Result: &runner.SequenceResult{Name: "many", Status: runner.Passed}})
	text := runningLine.ReplaceAllString(out.String(), "")
	for g := range 4 {
		branch := string(rune('a' + g))
		for i := range per {
			if n := strings.Count(text, " step 0."+branch+"."+strconv.Itoa(i)+" "); n != 1 {
				t.Fatalf("step 0.%s.%d printed %d times", branch, i, n)
			}
		}
	}
	if !strings.HasSuffix(out.String(), "\n") {
		t.Error("a running line is left on screen")
	}
}

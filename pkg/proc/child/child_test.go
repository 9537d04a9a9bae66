//go:build unix

package child

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/environ"
	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/logfile"
)

// hostProcs starts programs as the command line does.
var hostProcs = process.Permit(environ.Host())

// hang bounds a wait for an event that should come; past it the test fails
// instead of hanging.
const hang = 20 * time.Second

func start(t *testing.T, script string, cfg Config) *Process {
	t.Helper()
	if cfg.Name == "" {
		cfg.Name = "sh"
	}
	p, err := Start(hostProcs, process.Spec{Purpose: process.DebugServer, Argv: []string{"sh", "-c", script}}, cfg)
	if err != nil {
		t.Fatalf("start: %v", err)
	}
	t.Cleanup(func() { p.Stop(context.Background()) })
	return p
}

func waitDone(t *testing.T, p *Process) {
	t.Helper()
	select {
	case <-p.Done():
	case <-time.After(hang):
		t.Fatalf("the program did not exit within %v; it printed %q", hang, p.Output())
	}
}

// lines returns an OnLine that hands lines to a channel, and the channel.
func lines() (func(string), chan string) {
	ch := make(chan string, 2000)
	return func(l string) { ch <- l }, ch
}

func waitLine(t *testing.T, ch chan string, want string) {
	t.Helper()
	deadline := time.After(hang)
	for {
		select {
		case l := <-ch:
			if l == want {
				return
			}
		case <-deadline:
			t.Fatalf("no line %q within %v", want, hang)
		}
	}
}

func TestExited(t *testing.T) {
	for _, tc := range []struct {
		name      string
		script    string
		important func(string) bool
		code      int // the exit status, -1 for a signal
		want      string
	}{
		{
			name:   "exit status",
			script: "echo starting; echo 'Error: no probe' >&2; echo giving up; exit 3",
			code:   3,
			want:   "exited with exit status 3 before it was ready; sh said:\n\tstarting\n\tError: no probe\n\tgiving up",
		},
		{
			name:      "important lines first",
			script:    "echo starting; echo 'Error: no probe' >&2; echo giving up; exit 3",
			important: func(l string) bool { return strings.HasPrefix(l, "Error") },
			code:      3,
			want:      "exited with exit status 3 before it was ready; sh said:\n\tError: no probe",
		},
		{
			name:      "no important line: the last lines",
			script:    "echo starting; exit 1",
			important: func(l string) bool { return strings.HasPrefix(l, "Error") },
			code:      1,
			want:      "exited with exit status 1 before it was ready; sh said:\n\tstarting",
		},
		{
			name:   "silent success",
			script: "exit 0",
			code:   0,
			want:   "exited before it was ready",
		},
		{
			name:   "killed",
			script: "echo about to die; kill -KILL $$",
			code:   -1,
			want:   "exited with signal: killed before it was ready; sh said:\n\tabout to die",
		},
		{
			name:   "last line unfinished",
			script: "printf 'half a'; exit 2",
			code:   2,
			want:   "exited with exit status 2 before it was ready; sh said:\n\thalf a",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := start(t, tc.script, Config{Important: tc.important})
			waitDone(t, p)
			err := p.Err()
			var ee *process.ExitError
			switch {
			case tc.code == 0 && err != nil:
				t.Errorf("Err() = %v, want nil", err)
			case tc.code != 0 && !errors.As(err, &ee):
				t.Errorf("Err() = %v, want an *process.ExitError", err)
			case tc.code != 0 && ee.ExitCode() != tc.code:
				t.Errorf("exit code %d, want %d", ee.ExitCode(), tc.code)
			}
			if got := p.Exited("before it was ready").Error(); got != tc.want {
				t.Errorf("Exited() = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestErrBeforeExit(t *testing.T) {
	onLine, ch := lines()
	p := start(t, "echo up; exec sleep 100", Config{OnLine: onLine})
	waitLine(t, ch, "up")
	if err := p.Err(); err != nil {
		t.Errorf("Err() = %v while running, want nil", err)
	}
	select {
	case <-p.Done():
		t.Error("Done is closed while the program runs")
	default:
	}
	if p.Pid() <= 0 {
		t.Errorf("Pid() = %d", p.Pid())
	}
}

// TestManyLines: every line reaches OnLine, in order, but only the last
// Config.Lines are kept, and LastWords quotes ten.
func TestManyLines(t *testing.T) {
	const n = 1000
	onLine, ch := lines()
	p := start(t, fmt.Sprintf("i=1; while [ $i -le %d ]; do echo line $i; i=$((i+1)); done", n), Config{Lines: 25, OnLine: onLine})
	waitDone(t, p)
	for i := 1; i <= n; i++ {
		select {
		case l := <-ch:
			if want := "line " + strconv.Itoa(i); l != want {
				t.Fatalf("OnLine got %q, want %q", l, want)
			}
		default:
			t.Fatalf("OnLine got %d lines, want %d", i-1, n)
		}
	}
	got := p.Lines()
	if len(got) != 25 || got[0] != "line 976" || got[24] != "line 1000" {
		t.Errorf("Lines() kept %d lines, %q ... %q; want line 976 ... line 1000", len(got), got[0], got[len(got)-1])
	}
	if p.Output() != strings.Join(got, "\n") {
		t.Errorf("Output() = %q, want the kept lines", p.Output())
	}
	if !p.Contains("line 980") || p.Contains("line 975\n") || p.Contains("line 1 ") {
		t.Error("Contains does not search the kept lines only")
	}
	words := p.LastWords()
	if strings.Count(words, "\n\t") != 10 || !strings.HasSuffix(words, "\tline 991\n\tline 992\n\tline 993\n\tline 994\n\tline 995\n\tline 996\n\tline 997\n\tline 998\n\tline 999\n\tline 1000") {
		t.Errorf("LastWords() = %q, want the last ten lines", words)
	}
}

// TestRing: lines end at "\n", lose a "\r" before it, and are kept up to
// max; a line being written counts too.
func TestRing(t *testing.T) {
	r := &ring{max: 3}
	fmt.Fprint(r, "one\r\ntwo\nthree\nfo")
	fmt.Fprint(r, "ur\nfive")
	if got, want := r.lines(), []string{"two", "three", "four", "five"}; !reflect.DeepEqual(got, want) {
		t.Errorf("lines() = %q, want %q", got, want)
	}
	long := strings.Repeat("x", 3*maxLine)
	fmt.Fprint(r, "\n"+long+"\n")
	if got := r.lines(); len(got[2]) != maxLine {
		t.Errorf("a %d-byte line was kept as %d bytes, want %d", len(long), len(got[2]), maxLine)
	}
}

func TestStop(t *testing.T) {
	for _, tc := range []struct {
		name     string
		script   string
		grace    time.Duration
		cancel   bool // Stop's context is done already
		minTime  time.Duration
		maxTime  time.Duration
		signaled syscall.Signal
	}{
		// A program that exits on SIGTERM is not waited for the grace.
		{"terminated", "echo ready; exec sleep 100", time.Hour, false, 0, hang, syscall.SIGTERM},
		// One that ignores it is killed after the grace.
		{"killed after the grace", "trap '' TERM; echo ready; exec sleep 100", 300 * time.Millisecond, false, 300 * time.Millisecond, hang, syscall.SIGKILL},
		// A done context cuts the grace short.
		{"context done", "trap '' TERM; echo ready; exec sleep 100", time.Hour, true, 0, hang, syscall.SIGKILL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			onLine, ch := lines()
			p := start(t, tc.script, Config{OnLine: onLine, Grace: tc.grace})
			waitLine(t, ch, "ready")
			ctx := context.Background()
			if tc.cancel {
				c, cancel := context.WithCancel(ctx)
				cancel()
				ctx = c
			}
			stopped := make(chan struct{})
			t0 := time.Now()
			go func() {
				p.Stop(ctx)
				close(stopped)
			}()
			select {
			case <-stopped:
			case <-time.After(tc.maxTime):
				t.Fatalf("Stop did not return within %v", tc.maxTime)
			}
			if took := time.Since(t0); took < tc.minTime {
				t.Errorf("Stop took %v, want at least the grace, %v", took, tc.minTime)
			}
			select {
			case <-p.Done():
			default:
				t.Fatal("Done is not closed after Stop")
			}
			var ee *process.ExitError
			if !errors.As(p.Err(), &ee) {
				t.Fatalf("Err() = %v, want an *process.ExitError", p.Err())
			}
			if ws := ee.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != tc.signaled {
				t.Errorf("wait status %v, want killed by %v", ee.ProcessState, tc.signaled)
			}
			p.Stop(context.Background()) // idempotent
		})
	}
}

// TestStopEndsTheGroup: what the program started in its group goes with
// it, whether it runs watched or not, and whether it was running or had
// exited already. The program's child holds a FIFO open, which the test
// reads to its end: the end comes when the child is gone.
func TestStopEndsTheGroup(t *testing.T) {
	for _, tc := range []struct {
		name    string
		script  string // $1 is the FIFO
		running bool   // the program still runs when Stop is called
		watch   bool
	}{
		{"running", `trap '' TERM; sleep 100 3>"$1" & wait`, true, false},
		{"running, watched", `trap '' TERM; sleep 100 3>"$1" & wait`, true, true},
		{"exited", `sleep 100 3>"$1" >/dev/null 2>&1 &`, false, false},
		{"exited, watched", `sleep 100 3>"$1" >/dev/null 2>&1 &`, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fifo := filepath.Join(t.TempDir(), "held")
			if err := syscall.Mkfifo(fifo, 0o600); err != nil {
				t.Fatal(err)
			}
			opened := make(chan struct{})
			held := make(chan error, 1)
			go func() {
				f, err := os.Open(fifo) // returns once the child opened it
				close(opened)
				if err == nil {
					_, err = io.Copy(io.Discard, f) // returns once it is gone
					f.Close()
				}
				held <- err
			}()
			p, err := Start(hostProcs, process.Spec{Argv: []string{"sh", "-c", tc.script, "sh", fifo}}, Config{Name: "sh", Grace: time.Millisecond, Watch: tc.watch})
			if err != nil {
				t.Fatal(err)
			}
			select {
			case <-opened:
			case <-time.After(hang):
				p.Stop(context.Background())
				t.Fatal("the program's child did not open the FIFO")
			}
			if !tc.running {
				waitDone(t, p)
			}
			p.Stop(context.Background())
			select {
			case err := <-held:
				if err != nil {
					t.Fatalf("read the FIFO: %v", err)
				}
			case <-time.After(hang):
				t.Fatal("the program's child outlived Stop")
			}
		})
	}
}

func TestLogFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sh.log")
	if err := os.WriteFile(path, []byte("before\n"), 0o666); err != nil {
		t.Fatal(err)
	}
	p := start(t, "echo out; echo err >&2", Config{LogFile: path})
	waitDone(t, p)
	p.Stop(context.Background())
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(b); got != "before\nout\nerr\n" && got != "before\nerr\nout\n" {
		t.Errorf("the log holds %q, want what was there and both streams", got)
	}
	if err := p.LogErr(); err != nil {
		t.Errorf("LogErr() = %v, want nil", err)
	}
	if p := start(t, "exit 0", Config{}); p.LogErr() != nil {
		t.Errorf("LogErr() without a log = %v, want nil", p.LogErr())
	}
}

// TestLogFileFull gives the program a log on a full disk (/dev/full): it
// runs as it would without, and LogErr counts what the log lost, before
// and after Stop closed it.
func TestLogFileFull(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skip("no /dev/full on this system")
	}
	const path = "/dev/full"
	p := start(t, "echo 12345; echo 6789; exit 4", Config{Name: "prog", LogFile: path})
	waitDone(t, p)
	if got := p.Output(); got != "12345\n6789" {
		t.Errorf("Output() = %q, want both lines", got)
	}
	want := "prog log " + path + ": 11 of 11 bytes lost: no space left on device"
	if err := p.LogErr(); err == nil || err.Error() != want {
		t.Errorf("LogErr() before Stop = %v, want %s", err, want)
	}
	p.Stop(context.Background())
	var le *logfile.LossError
	if err := p.LogErr(); !errors.As(err, &le) || err.Error() != want || !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("LogErr() after Stop = %v, want %s", err, want)
	}
}

func TestStartFails(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		argv []string
		log  string
		want string
	}{
		{"no such program", []string{filepath.Join(dir, "missing")}, "", "no such file or directory"},
		{"no such program, with a log", []string{filepath.Join(dir, "missing")}, filepath.Join(dir, "a.log"), "no such file or directory"},
		{"log in a missing directory", []string{"true"}, filepath.Join(dir, "no", "a.log"), "open log file: open " + filepath.Join(dir, "no", "a.log") + ": no such file or directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Start(hostProcs, process.Spec{Argv: tc.argv}, Config{Name: "x", LogFile: tc.log})
			if err == nil || !strings.Contains(err.Error(), tc.want) || p != nil {
				t.Errorf("Start = %v, %v; want nil and an error with %q", p, err, tc.want)
			}
		})
	}
}

// Package child runs a long-lived program that hilrun depends on, such as
// OpenOCD or QEMU: in a process group of its own that dies with hilrun,
// its output read line by line (for readiness) and its last lines kept
// (for error messages), copied to a log file that counts what it could
// not write, and stopped with SIGTERM, then SIGKILL after a grace period.
// The launchers keep what is theirs: arguments, readiness and addresses.
package child

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/hilrun/hilrun/pkg/gate/process"
	"github.com/hilrun/hilrun/pkg/logfile"
)

// DefaultGrace is how long Stop waits after SIGTERM before it kills the
// program, when Config.Grace is 0.
const DefaultGrace = 3 * time.Second

// DefaultLines is how many of the program's last output lines a Process
// keeps, when Config.Lines is 0.
const DefaultLines = 40

// shownLines is how many lines LastWords quotes.
const shownLines = 10

// maxLine bounds a line kept in memory, in bytes; the rest of a longer
// line is dropped (the log file has it all).
const maxLine = 4096

// Config says how to run a program.
type Config struct {
	// Name names the program in LastWords ("; openocd said:") and its log
	// file in errors ("openocd log").
	Name string
	// Lines is how many of the last output lines are kept; 0 means
	// DefaultLines.
	Lines int
	// OnLine, if set, is called with each line the program prints on
	// stdout or stderr, without its line ending, in order, from the
	// goroutine that copies the output: it must not block.
	OnLine func(line string)
	// Important, if set, picks the lines LastWords quotes when it picks
	// any, such as OpenOCD's "Error: ..." lines; else it quotes the last
	// lines.
	Important func(line string) bool
	// LogFile, if set, receives everything the program prints on stdout
	// and stderr, appended.
	LogFile string
	// Grace is how long Stop waits after SIGTERM before it kills the
	// program; 0 means DefaultGrace.
	Grace time.Duration
	// Watch runs the program under the process gate's watcher, so that
	// its own children die with hilrun too; else only its group's leader
	// does (process.Spec.Watch).
	Watch bool
}

// Process is a running program. Its methods are safe for concurrent use.
type Process struct {
	proc      *process.Proc
	name      string
	grace     time.Duration
	important func(string) bool
	out       *ring
	log       *logfile.File

	done    chan struct{} // closed when the program has exited
	waitErr error         // how it exited; set before done closes

	stopOnce sync.Once
}

// Start starts spec through the process gate's policy pol; Start sets its
// output, process group and WaitDelay (spec's own are ignored). The error
// is the gate's, or says the log file could not be opened; callers prefix
// what they were starting.
func Start(pol process.Policy, spec process.Spec, cfg Config) (*Process, error) {
	if cfg.Lines <= 0 {
		cfg.Lines = DefaultLines
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	p := &Process{
		name:      cfg.Name,
		grace:     cfg.Grace,
		important: cfg.Important,
		out:       &ring{max: cfg.Lines, onLine: cfg.OnLine},
		done:      make(chan struct{}),
	}
	var w io.Writer = p.out
	if cfg.LogFile != "" {
		// A write that fails does not fail the copy of the program's
		// output (which would leave it to die of SIGPIPE on its next
		// message): it is counted, for LogErr.
		f, err := logfile.Append(cfg.Name+" log", cfg.LogFile)
		if err != nil {
			return nil, fmt.Errorf("open log file: %w", err)
		}
		p.log = f
		w = io.MultiWriter(p.out, p.log)
	}
	spec.Stdin = nil
	spec.Stdout = w
	spec.Stderr = w
	// Should anything the program started keep the output pipe open
	// after it exits, Wait must still return.
	spec.WaitDelay = time.Second
	spec.Watch = cfg.Watch
	proc, err := pol.Start(spec)
	if err != nil {
		if p.log != nil {
			p.log.Close()
		}
		return nil, err
	}
	p.proc = proc
	go func() {
		p.waitErr = proc.Wait()
		close(p.done)
	}()
	return p, nil
}

// Pid returns the program's process ID, which is also its process
// group's.
func (p *Process) Pid() int { return p.proc.Pid() }

// Done is closed when the program has exited.
func (p *Process) Done() <-chan struct{} { return p.done }

// Err returns how the program exited, once Done is closed; nil before.
func (p *Process) Err() error {
	select {
	case <-p.done:
		return p.waitErr
	default:
		return nil
	}
}

// Lines returns the last lines the program printed, oldest first; the
// last one lacks its line ending when the program has not printed it yet.
func (p *Process) Lines() []string { return p.out.lines() }

// Output returns the last lines the program printed, joined by "\n".
func (p *Process) Output() string { return strings.Join(p.out.lines(), "\n") }

// Contains reports whether one of the last lines contains s.
func (p *Process) Contains(s string) bool {
	for _, l := range p.out.lines() {
		if strings.Contains(l, s) {
			return true
		}
	}
	return false
}

// LastWords returns the program's last output lines for an error message,
// "; NAME said:\n\tLINE...", the important ones when there are any (see
// Config.Important), or "" when it printed nothing.
func (p *Process) LastWords() string {
	lines := p.out.lines()
	if len(lines) == 0 {
		return ""
	}
	if p.important != nil {
		var picked []string
		for _, l := range lines {
			if p.important(l) {
				picked = append(picked, l)
			}
		}
		if len(picked) > 0 {
			lines = picked
		}
	}
	if len(lines) > shownLines {
		lines = lines[len(lines)-shownLines:]
	}
	return "; " + p.name + " said:\n\t" + strings.Join(lines, "\n\t")
}

// Exited describes an exit the caller did not ask for, once Done is
// closed: "exited with exit status 1 WHEN; NAME said: ...". when says what
// the program had not done yet: "before it was ready".
func (p *Process) Exited(when string) error {
	status := "exited"
	if err := p.Err(); err != nil {
		var ee *process.ExitError
		if errors.As(err, &ee) {
			status = "exited with " + ee.ProcessState.String()
		} else {
			status = "failed: " + err.Error()
		}
	}
	return fmt.Errorf("%s %s%s", status, when, p.LastWords())
}

// Stop ends the program and everything in its process group: SIGTERM,
// then SIGKILL after Config.Grace or when ctx ends, whichever comes first.
// It returns once the program has exited, and closes the log file. Stop is
// idempotent; a second call waits for the first to finish.
func (p *Process) Stop(ctx context.Context) {
	p.stopOnce.Do(func() {
		select {
		case <-p.done:
		default:
			p.proc.Terminate()
			t := time.NewTimer(p.grace)
			select {
			case <-p.done:
			case <-t.C:
			case <-ctx.Done():
			}
			t.Stop()
			p.proc.Kill()
			<-p.done
		}
		// Whatever the program left in its group (a watcher, a child)
		// goes with it.
		p.proc.Kill()
		if p.log != nil {
			p.log.Close()
		}
	})
}

// LogErr returns nil when Config.LogFile holds all the program printed (or
// there is none), else a *logfile.LossError saying how many bytes it lost,
// as on a full disk. Call it after Stop for the final word.
func (p *Process) LogErr() error {
	if p.log == nil {
		return nil
	}
	if e := p.log.Loss(); e != nil {
		return e
	}
	return nil
}

// ring keeps the last lines written to it and hands each to onLine.
type ring struct {
	max    int
	onLine func(string)

	mu      sync.Mutex
	partial []byte
	kept    []string
}

func (r *ring) Write(b []byte) (int, error) {
	r.mu.Lock()
	var done []string
	for _, c := range b {
		if c == '\n' {
			l := strings.TrimRight(string(r.partial), "\r")
			r.partial = r.partial[:0]
			r.kept = append(r.kept, l)
			if len(r.kept) > r.max {
				r.kept = r.kept[len(r.kept)-r.max:]
			}
			done = append(done, l)
			continue
		}
		if len(r.partial) < maxLine {
			r.partial = append(r.partial, c)
		}
	}
	r.mu.Unlock()
	if r.onLine != nil {
		for _, l := range done {
			r.onLine(l)
		}
	}
	return len(b), nil
}

func (r *ring) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	l := append([]string(nil), r.kept...)
	if len(r.partial) > 0 {
		l = append(l, string(r.partial))
	}
	return l
}

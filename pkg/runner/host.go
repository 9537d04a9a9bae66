package runner

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
)

// HostRunner runs a host command to completion, its standard output and
// error both to out. exitCode is the command's exit status; err is non-nil
// only when it could not be started or ctx ended. build.ExecRunner is one.
type HostRunner interface {
	Run(ctx context.Context, argv []string, dir string, env []string, out io.Writer) (exitCode int, err error)
}

// What a host command prints is kept in memory in part, for expect and
// save (exec steps) and for the last line of a failure; its log file has
// all of it.
const (
	// execKeep bounds the output kept in memory: the first execHead
	// bytes and the last execKeep-execHead.
	execKeep = 1 << 20
	execHead = 64 << 10
	// lineMax is the longest line lineWriter holds back waiting for its
	// end.
	lineMax = 4 << 10
)

// keepWriter keeps the first execHead bytes written to it and the last
// execKeep-execHead, and counts what it dropped between them, so that
// expect sees how a long output begins and how it ends.
type keepWriter struct {
	mu      sync.Mutex
	head    []byte
	tail    []byte
	dropped int64
}

func (w *keepWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	if room := execHead - len(w.head); room > 0 {
		k := min(room, len(p))
		w.head = append(w.head, p[:k]...)
		p = p[k:]
	}
	w.tail = append(w.tail, p...)
	if over := len(w.tail) - (execKeep - execHead); over > 0 {
		// Trim once twice the bound is held, so a long output costs one
		// copy per bound's worth of bytes.
		if len(w.tail) > 2*(execKeep-execHead) {
			w.dropped += int64(over)
			w.tail = append(w.tail[:0], w.tail[over:]...)
		}
	}
	return n, nil
}

// parts returns what was kept: the head and the tail, which join without
// a gap when dropped is 0.
func (w *keepWriter) parts() (head, tail []byte, dropped int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	tail = w.tail
	dropped = w.dropped
	if over := len(tail) - (execKeep - execHead); over > 0 {
		dropped += int64(over)
		tail = tail[over:]
	}
	return w.head, tail, dropped
}

// lineWriter hands complete lines to fn, and lines longer than lineMax in
// pieces.
type lineWriter struct {
	mu   sync.Mutex
	part []byte
	// cut is true after a piece of a long line was handed on, so that the
	// line's end alone makes no empty line.
	cut bool
	fn  func(string)
}

func (w *lineWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 || len(w.part)+i > lineMax {
			// No end of line within lineMax: hand on a piece.
			k := min(len(p), lineMax-len(w.part))
			if i >= 0 {
				k = min(k, i)
			}
			w.part = append(w.part, p[:k]...)
			p = p[k:]
			if len(w.part) >= lineMax {
				w.fn(string(w.part))
				w.part = w.part[:0]
				w.cut = true
			}
			continue
		}
		w.part = append(w.part, p[:i]...)
		p = p[i+1:]
		if len(w.part) > 0 || !w.cut {
			w.fn(strings.TrimSuffix(string(w.part), "\r"))
		}
		w.part = w.part[:0]
		w.cut = false
	}
	return n, nil
}

// flush hands on an unfinished last line.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.part) > 0 {
		w.fn(string(w.part))
		w.part = nil
	}
}

// host runs argv with its output to a log file in the artifact folder, to
// the event stream as console "exec" or "power", and into memory.
func (r *run) host(ctx context.Context, console, logName string, argv []string, dir string, env []string) (code int, out *keepWriter, logPath string, err error) {
	if r.bench.Host == nil {
		return -1, nil, "", fmt.Errorf("%s: no way to run host commands was given", console)
	}
	var f Log = discardLog{}
	if r.bench.OpenLog != nil {
		adir, err := r.artifactDir()
		if err != nil {
			return -1, nil, "", err
		}
		logPath = filepath.Join(adir, logName+".log")
		// A full disk must not stop the command's output reaching the
		// step: the log counts what it could not write, for the run to
		// report.
		if f, err = r.bench.OpenLog(console+" log", logPath); err != nil {
			return -1, nil, "", fmt.Errorf("%s: open its log: %w", console, err)
		}
	}
	defer func() {
		f.Close()
		if e := f.Loss(); e != nil {
			r.mu.Lock()
			r.logLoss = append(r.logLoss, e)
			r.mu.Unlock()
		}
	}()
	fmt.Fprintf(f, "$ %s\n", r.opts.Secrets.Mask([]byte(shellLine(argv))))
	out = &keepWriter{}
	lw := &lineWriter{fn: func(l string) {
		r.emit(Event{Type: ConsoleOutput, Console: console, Data: []byte(l + "\n")})
	}}
	// The program's output reaches nothing with a secret in it: not the
	// log, not the step's expect, not the event stream.
	mw := r.opts.Secrets.NewWriter(io.MultiWriter(f, out, lw))
	code, err = r.bench.Host.Run(ctx, argv, dir, env, mw)
	mw.Flush()
	lw.flush()
	if err == nil {
		fmt.Fprintf(f, "[exit %d]\n", code)
	}
	return code, out, logPath, err
}

// discardLog is the log of a host command on a bench that keeps none.
type discardLog struct{}

func (discardLog) Write(p []byte) (int, error) { return len(p), nil }

func (discardLog) Close() {}

func (discardLog) Loss() error { return nil }

// shellLine renders argv as a shell would read it, quoting what needs it.
func shellLine(argv []string) string {
	out := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n'\"\\$`|&;<>()*?[]{}#~") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		out[i] = a
	}
	return strings.Join(out, " ")
}

package runner

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// HostRunner runs a host command to completion, its standard output and
// error both to out. exitCode is the command's exit status; err is non-nil
// only when it could not be started or ctx ended. build.ExecRunner is one.
type HostRunner interface {
	Run(ctx context.Context, argv []string, dir string, env []string, out io.Writer) (exitCode int, err error)
}

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
			r.logLoss = append(r.logLoss, e)
		}
	}()
	fmt.Fprintf(f, "$ %s\n", shellLine(argv))
	out = &keepWriter{}
	lw := &lineWriter{fn: func(l string) {
		r.emit(Event{Type: ConsoleOutput, Console: console, Data: []byte(l + "\n")})
	}}
	code, err = r.bench.Host.Run(ctx, argv, dir, env, io.MultiWriter(f, out, lw))
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

func (r *run) exec(ctx context.Context, s *steps.Step, res *StepResult) error {
	x := s.Exec
	argv, env, err := r.expandCommand("exec", x.Command, x.Env)
	if err != nil {
		return err
	}
	if x.Shell {
		argv = []string{"sh", "-c", argv[0]}
	}
	timeout := s.Timeout
	if timeout == 0 {
		timeout = defaultExecTimeout
	}
	ectx, cancel := context.WithTimeoutCause(ctx, timeout, errStepTimeout)
	defer cancel()
	began := time.Now()
	var code int
	var out *keepWriter
	var logPath, port string
	err, portErr := r.withPortReleased(ectx, x.Port, &port, func() error {
		if port != "" {
			env = append(env, "HILRUN_PORT="+port)
		}
		var err error
		code, out, logPath, err = r.host(ectx, "exec", artifactName(s, res), argv, x.Dir, env)
		return err
	})
	if portErr != nil {
		// A console that could not be taken back is the bench's problem,
		// and the steps after would fail for it.
		return fmt.Errorf("exec %s: %w", argv[0], errors.Join(err, portErr))
	}
	res.Data = map[string]any{"command": argv, "exit_code": code, "duration_ms": ms(time.Since(began))}
	if logPath != "" {
		res.Data["log"] = logPath
	}
	output, segments, dropped := execOutput(out, res)
	tail := stream.Printable(stream.Tail(output, 10, 2048))
	switch {
	case err != nil && errors.Is(context.Cause(ectx), errStepTimeout) && ctx.Err() == nil:
		return &stepError{msg: fmt.Sprintf("%s timed out after %s", argv[0], timeout), received: tail}
	case err != nil && ctx.Err() != nil:
		return fmt.Errorf("exec %s: %w", argv[0], context.Cause(ctx))
	case err != nil:
		return fmt.Errorf("exec: %w", err)
	}
	if !exitOK(x, code) {
		want := "0"
		if len(x.ExitCodes) > 0 {
			want = strings.Trim(strings.Join(strings.Fields(fmt.Sprint(x.ExitCodes)), " or "), "[]")
		}
		msg := fmt.Sprintf("%s exited with %d, want %s", argv[0], code, want)
		if l := lastLine(output); l != "" {
			msg += "; last output: " + quoted([]byte(l))
		}
		return &stepError{msg: msg, expected: "exit " + want, received: tail}
	}
	res.Message = fmt.Sprintf("%s exited with %d", argv[0], code)
	if len(s.Expect) == 0 {
		if len(s.Save) == 1 {
			v := strings.TrimRight(string(segments[len(segments)-1]), "\r\n")
			if err := r.setVar("save", s.Save[0].Var, v); err != nil {
				return err
			}
			res.Saved = map[string]any{s.Save[0].Var: v}
		}
		return nil
	}
	return r.execExpect(s, res, argv[0], segments, dropped, tail)
}

func exitOK(x *steps.ExecSpec, code int) bool {
	if x.AnyExit {
		return true
	}
	if len(x.ExitCodes) == 0 {
		return code == 0
	}
	for _, c := range x.ExitCodes {
		if c == code {
			return true
		}
	}
	return false
}

// execOutput is what an exec step's command printed: output, what was
// kept (also in the step's data, its end at most execReport bytes), and
// segments, the parts expect searches: the head and the tail apart when
// dropped bytes were cut from the middle, so no match spans the gap.
func execOutput(out *keepWriter, res *StepResult) (output []byte, segments [][]byte, dropped int64) {
	segments = [][]byte{nil}
	if out == nil {
		return nil, segments, 0
	}
	head, tail, dropped := out.parts()
	output = append(append([]byte(nil), head...), tail...)
	segments = [][]byte{output}
	if dropped > 0 {
		segments = [][]byte{head, tail}
		res.Data["output_dropped"] = dropped
	}
	shown := output
	if len(shown) > execReport {
		shown = shown[len(shown)-execReport:]
	}
	res.Data["output"] = string(shown)
	return output, segments, dropped
}

// execExpect checks an exec step's expect against the segments of its
// command's output and saves what matched.
func (r *run) execExpect(s *steps.Step, res *StepResult, cmd string, segments [][]byte, dropped int64, tail string) error {
	want, err := r.patterns(s.Expect)
	if err != nil {
		return err
	}
	for i, seg := range segments {
		m, ok := stream.Find(seg, want)
		if i == 0 && len(segments) > 1 {
			// The head ends where output was dropped: a match there that
			// the dropped bytes could have changed gives no value.
			var cut bool
			if m, ok, cut = stream.FindCut(seg, want); cut {
				msg := fmt.Sprintf("the output of %s matches %s where its first %d KiB end, and the match may go on into the %d bytes that were dropped (they are only in the log)", cmd, describe(want), execHead>>10, dropped)
				return &stepError{msg: msg, expected: describe(want), received: tail}
			}
		}
		if ok {
			res.Data["match"] = m.Groups[0]
			res.Message += ", matched " + quoted([]byte(m.Groups[0]))
			return r.saveMatch(s, res, m, want[m.Index])
		}
	}
	msg := fmt.Sprintf("the output of %s has no %s", cmd, describe(want))
	if dropped > 0 {
		msg += fmt.Sprintf(" (searched its first %d KiB and last %d KiB; %d bytes between are only in the log)", execHead>>10, (execKeep-execHead)>>10, dropped)
	}
	return &stepError{msg: msg, expected: describe(want), received: tail}
}

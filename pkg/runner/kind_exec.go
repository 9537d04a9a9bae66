package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

func init() { leafRunners[steps.KindExec] = (*run).exec }

const (
	// defaultExecTimeout bounds an exec step that gives no timeout.
	defaultExecTimeout = 60 * time.Second
	// execReport bounds the output in the step's data (reports, MCP
	// results, steps.ID.output): the last execReport bytes of what was
	// kept.
	execReport = 64 << 10
)

// exec runs the step's host command, with its console released when it
// names a port, and checks its exit status and output.
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

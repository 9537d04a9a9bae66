package runner

import (
	"context"
	"fmt"
	"strings"

	"github.com/hilrun/hilrun/pkg/steps"
	"github.com/hilrun/hilrun/pkg/stream"
)

// halt, resume, reset, openocd and monitor steps each ask the step's probe
// for one thing, with one runner: typed operations for the first three,
// raw commands for the others.
func init() {
	for _, k := range []steps.Kind{steps.KindHalt, steps.KindResume, steps.KindReset, steps.KindOpenOCD, steps.KindMonitor} {
		leafRunners[k] = (*run).debugger
	}
}

// debugger runs halt, resume and reset steps through the probe's typed
// operations, and openocd and monitor steps as raw commands.
func (r *run) debugger(ctx context.Context, s *steps.Step, res *StepResult) error {
	d, err := r.probe(s.To)
	if err != nil {
		return err
	}
	if s.Kind == steps.KindOpenOCD || s.Kind == steps.KindMonitor {
		return r.rawCommand(ctx, d, s, res)
	}
	pctx, cancel := r.probeCtx(ctx, s)
	defer cancel()
	var what string
	switch s.Kind {
	case steps.KindHalt:
		what, err = "halt", d.Halt(pctx)
	case steps.KindResume:
		what, err = "resume", d.Resume(pctx)
	case steps.KindReset:
		what, err = "reset "+s.ResetMode, d.Reset(pctx, s.ResetMode)
	default:
		return fmt.Errorf("step kind %s is not a debugger step", s.Kind)
	}
	res.Data = map[string]any{"command": what}
	if err != nil {
		return probeErr(ctx, pctx, what, err)
	}
	res.Message = what
	return nil
}

// rawCommand runs an openocd or monitor step: its text goes to the probe
// as a raw command, and expect and save apply to what it printed.
func (r *run) rawCommand(ctx context.Context, d Debugger, s *steps.Step, res *StepResult) error {
	rc, ok := DebuggerAs[RawCommander](d)
	if !ok {
		return fmt.Errorf("probe %s takes no raw commands: its backend has typed operations only (mem_read, mem_write, halt, resume, reset)", s.To)
	}
	tmpl := s.OpenOCD
	if s.Kind == steps.KindMonitor {
		tmpl = s.Monitor
	}
	cmd, err := r.expand(string(s.Kind), tmpl)
	if err != nil {
		return err
	}
	pctx, cancel := r.probeCtx(ctx, s)
	defer cancel()
	out, err := rc.Command(pctx, cmd)
	res.Data = map[string]any{"command": cmd, "output": out}
	if err != nil {
		return probeErr(ctx, pctx, cmd, err)
	}
	res.Message = cmd
	if l := lastLine([]byte(out)); l != "" {
		res.Message += ": " + l
	}
	if len(s.Expect) == 0 {
		for _, sv := range s.Save {
			if err := r.setVar("save", sv.Var, strings.TrimSpace(out)); err != nil {
				return err
			}
			res.Saved = map[string]any{sv.Var: strings.TrimSpace(out)}
		}
		return nil
	}
	want, err := r.patterns(s.Expect)
	if err != nil {
		return err
	}
	for i, p := range want {
		if loc := p.Find([]byte(out)); loc != nil {
			m := stream.Match{Index: i, Names: p.SubexpNames()}
			for g := 0; g+1 < len(loc); g += 2 {
				if loc[g] < 0 {
					m.Groups = append(m.Groups, "")
					continue
				}
				m.Groups = append(m.Groups, out[loc[g]:loc[g+1]])
			}
			res.Data["match"] = m.Groups[0]
			return r.saveMatch(s, res, m, p)
		}
	}
	return &stepError{
		msg:      fmt.Sprintf("%s %s: output does not contain %s", s.Kind, cmd, describe(want)),
		expected: describe(want), received: stream.Printable([]byte(out)),
	}
}

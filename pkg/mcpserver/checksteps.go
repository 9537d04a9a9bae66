package mcpserver

import (
	"fmt"
	"strings"

	"github.com/hilrun/hilrun/pkg/steps"
)

func (s *Server) checkSteps(seq *steps.Sequence, label func(steps.Pos) string) error {
	errs := s.checkCameras(seq, label)
	steps.Walk(seq, func(st *steps.Step) {
		where := st.Pos.String()
		if label != nil {
			where = label(st.Pos)
		}
		if err := s.checkStep(seq, st); err != nil {
			errs = append(errs, where+": "+unrefused(err))
		}
	})
	if len(errs) > 0 {
		return fmt.Errorf("%s: %w", strings.Join(errs, "\n"), ErrRefused)
	}
	return nil
}

// checkStep applies the policy to one step.
func (s *Server) checkStep(seq *steps.Sequence, st *steps.Step) error {
	p := &s.cfg.Policy
	caps, ok := steps.StepCaps(st)
	if !ok {
		return refused("step kind %q is not described in the capability table, so it is refused", st.Kind)
	}
	// An openocd step, or a monitor step on OpenOCD, is Tcl the policy
	// parses; a monitor step elsewhere is raw (its kind's caps).
	tcl := tclCommand(seq, st)
	if tcl != nil {
		caps = s.commandCaps(tcl)
	}
	if err := p.Allow(string(st.Kind), caps); err != nil {
		return err
	}
	if tcl != nil && tcl.IsStatic() {
		if _, err := p.CheckCommand(s.cfg.Engine.ParseCommand, tcl.Raw); err != nil {
			return err
		}
	}
	if st.Mem != nil && st.Mem.ELF != "" {
		real, err := p.ResolveFile(st.Mem.ELF)
		if err != nil {
			return err
		}
		setPath(&st.Mem.ELF, real)
	}
	if (st.Kind == steps.KindBuild || st.Kind == steps.KindUpload || st.Kind == steps.KindPIOTest) && st.Build != nil {
		return s.checkBuild(seq, st)
	}
	return s.checkControl(seq, st)
}

// commandCaps is what an openocd: step can do: a raw command where the
// policy sends raw Tcl; else a typed command's effect when its text is
// fixed. A command filled in from variables is checked as it is sent
// (guarded.Command).
func (s *Server) commandCaps(cmd *steps.Template) steps.Cap {
	p := &s.cfg.Policy
	if p.AllowDebugTcl && !p.ReadOnly {
		return steps.CapDebugRaw
	}
	if cmd.IsStatic() {
		if parse := s.cfg.Engine.ParseCommand; parse != nil {
			if t, err := parse(cmd.Raw); err == nil {
				return commandCaps(t)
			}
		}
	}
	return steps.CapMemRead
}

// tclCommand is the OpenOCD Tcl command step st sends: an openocd step's,
// or a monitor step's on a probe that OpenOCD serves (every probe the
// bench file does not bind to a GDB stub ends up on OpenOCD); nil for any
// other step.
func tclCommand(seq *steps.Sequence, st *steps.Step) *steps.Template {
	switch st.Kind {
	case steps.KindOpenOCD:
		return st.OpenOCD
	case steps.KindMonitor:
		if p := seq.Probe(st.To); p == nil || p.GDB == "" {
			return st.Monitor
		}
	}
	return nil
}

// unrefused is err's text without the ErrRefused suffix, for errors that
// are joined and wrapped again.
func unrefused(err error) string {
	return strings.TrimSuffix(err.Error(), ": "+ErrRefused.Error())
}
